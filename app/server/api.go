package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"reflect"
	"strings"

	"proscenium/app/internal/files"
	"proscenium/app/studio"
	"proscenium/app/voicelib"
)

// maxAPIBody caps a POST /api/<Method> body: a maximal script, fully
// escaped, fits with room to spare.
const maxAPIBody = 1 << 20

// maxRecordingAPIBody caps the body of a method that takes a recording
// (recordingMethods): the largest recording the voice library accepts, as
// JSON carries []byte (base64, 4 bytes for 3), beside its other arguments.
// Under maxAPIBody a browser's studio could not make a voice from more
// than about 7 s of 44.1 kHz WAV.
const maxRecordingAPIBody = (voicelib.MaxAudioBytes+2)/3*4 + maxAPIBody

// recordingMethods are the service methods whose arguments carry a
// recording ([]byte); apiMethods refuses a service with another such
// method, so none is left at maxAPIBody by mistake.
var recordingMethods = map[string]bool{"CreateVoice": true, "EncodeReference": true}

// apiBodyLimit is the most bytes a JSON POST to path may carry: the
// policy and the /api/ handler read bodies up to it.
func apiBodyLimit(path string) int64 {
	if m, ok := strings.CutPrefix(path, "/api/"); ok && recordingMethods[m] {
		return maxRecordingAPIBody
	}
	return maxAPIBody
}

// apiMethod is one method of the service callable over HTTP, mirroring
// what Wails binds: its arguments arrive as a JSON array, its value leaves
// as JSON.
type apiMethod struct {
	fn       reflect.Value
	args     []reflect.Type
	hasValue bool // first result is a value (else the only result is error)
	hasError bool // last result is an error
}

var (
	errorType = reflect.TypeFor[error]()
	bytesType = reflect.TypeFor[[]byte]()
)

// apiMethods lists the exported methods of svc (app.Service): the same set
// Wails binds.
func apiMethods(svc any) (map[string]apiMethod, error) {
	v := reflect.ValueOf(svc)
	t := v.Type()
	out := map[string]apiMethod{}
	for i := range t.NumMethod() {
		m := t.Method(i)
		ft := m.Type // includes the receiver
		am := apiMethod{fn: v.Method(i)}
		for j := 1; j < ft.NumIn(); j++ {
			am.args = append(am.args, ft.In(j))
			if ft.In(j) == bytesType && !recordingMethods[m.Name] {
				return nil, fmt.Errorf("method %s takes []byte: list it in recordingMethods so its body may hold a recording", m.Name)
			}
		}
		switch ft.NumOut() {
		case 1:
			am.hasError = ft.Out(0) == errorType
			am.hasValue = !am.hasError
		case 2:
			if ft.Out(1) != errorType {
				return nil, fmt.Errorf("method %s: second result must be error", m.Name)
			}
			am.hasValue, am.hasError = true, true
		default:
			return nil, fmt.Errorf("method %s: must return a value, an error, or both", m.Name)
		}
		out[m.Name] = am
	}
	return out, nil
}

// apiError is the body of every failed API call.
type apiError struct {
	Error string `json:"error"`
}

// statusOf maps an error to the HTTP status the browser transport sees.
func statusOf(err error) int {
	switch {
	case errors.Is(err, studio.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, studio.ErrNoModel), errors.Is(err, studio.ErrBusy), errors.Is(err, studio.ErrExists):
		return http.StatusConflict
	case errors.Is(err, studio.ErrNoBackend):
		return http.StatusNotImplemented
	case errors.Is(err, studio.ErrNoDialog):
		return http.StatusNotImplemented
	case errors.Is(err, studio.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiHandler serves POST /api/{method}: the body is the JSON array of the
// method's arguments ("[]" or empty for none); unknown fields are refused.
// A method of modelPathMethods answers only for a folder under roots()
// (403 otherwise).
func apiHandler(methods map[string]apiMethod, roots func() []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("method")
		m, ok := methods[name]
		if !ok {
			writeJSON(w, http.StatusNotFound, apiError{fmt.Sprintf("no API method %q", name)})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, apiBodyLimit(r.URL.Path)))
		if err != nil {
			writeJSON(w, http.StatusRequestEntityTooLarge, apiError{fmt.Sprintf("%s: request body: %v", name, err)})
			return
		}
		args, err := decodeArgs(body, m.args)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{fmt.Sprintf("%s: %v", name, err)})
			return
		}
		if modelPathMethods[name] && len(args) > 0 && args[0].Kind() == reflect.String {
			var known []string
			if roots != nil {
				known = roots()
			}
			if err := checkModelPath(name, args[0].String(), known); err != nil {
				writeJSON(w, http.StatusForbidden, apiError{err.Error()})
				return
			}
		}
		out := m.fn.Call(args)
		if m.hasError {
			if err, _ := out[len(out)-1].Interface().(error); err != nil {
				writeJSON(w, statusOf(err), apiError{err.Error()})
				return
			}
		}
		var v any
		if m.hasValue {
			v = out[0].Interface()
		}
		writeJSON(w, http.StatusOK, v)
	}
}

func decodeArgs(body []byte, types []reflect.Type) ([]reflect.Value, error) {
	var raw []json.RawMessage
	if len(bytes.TrimSpace(body)) > 0 {
		if err := files.DecodeStrict(body, &raw); err != nil {
			return nil, fmt.Errorf("the body must be a JSON array of arguments: %v", err)
		}
	}
	if len(raw) != len(types) {
		return nil, fmt.Errorf("takes %d argument(s), got %d", len(types), len(raw))
	}
	args := make([]reflect.Value, len(types))
	for i, t := range types {
		p := reflect.New(t)
		if err := files.DecodeStrict(raw[i], p.Interface()); err != nil {
			return nil, fmt.Errorf("argument %d: %v", i+1, err)
		}
		args[i] = p.Elem()
	}
	return args, nil
}
