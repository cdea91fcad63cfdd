package studio

import (
	"errors"
	"strings"
)

// Errors the UI shows as they are. Each is wrapped with detail where there
// is any; errors.Is still finds the kind.
var (
	// ErrNoModel: the request needs a loaded model and there is none.
	ErrNoModel = errors.New("no model loaded")
	// ErrNoBackend: this build cannot open any checkpoint yet.
	ErrNoBackend = errors.New("no backend in this build can load models yet")
	// ErrBusy: the request conflicts with work in progress.
	ErrBusy = errors.New("busy")
	// ErrInvalid: a setting or request field is out of range or malformed.
	ErrInvalid = errors.New("invalid")
	// ErrExists: the file is there and replacing it was not confirmed.
	ErrExists = errors.New("exists")
	// ErrNotFound: no such take.
	ErrNotFound = errors.New("not found")
	// ErrNoDialog: no native file dialog here (the browser): type the path.
	ErrNoDialog = errors.New("no native file dialog in the browser: type the path")
)

// Detail is err's message without ErrInvalid's "invalid: " in front: the
// sentence a client of the speech API reads (the UI trims it the same way,
// frontend/src/lib/errors.ts).
func Detail(err error) string {
	return strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")
}
