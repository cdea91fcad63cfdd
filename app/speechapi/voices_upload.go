package speechapi

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"proscenium/app/voice"
	"proscenium/engine/api"
)

// Library voices: a named voice may carry a reference recording kept in the
// voice library; POST /v1/audio/voices (multipart: name, transcript, audio)
// creates one, and a request that names it speaks with its reference.

// VoiceLibrary is what the handler needs of the voice library.
type VoiceLibrary struct {
	// References returns the references a voice speaks with (none for a
	// voice without a recording).
	References func(v voice.Voice) ([]api.Reference, error)
	// Create makes a voice from a recording and its transcript, returning
	// every voice; its errors are the request's problems (400).
	Create func(name, transcript string, recording []byte) ([]voice.Voice, error)
	// MaxUploadBytes bounds a creation's body (more: 413).
	MaxUploadBytes int64
	// MaxRecordingBytes bounds the audio part (more: 413), read no further.
	MaxRecordingBytes int64
}

// WithVoiceLibrary makes library voices speakable and creatable.
func (h *Handler) WithVoiceLibrary(lib VoiceLibrary) *Handler {
	h.library = &lib
	return h
}

// createVoice serves POST /v1/audio/voices.
func (h *Handler) createVoice(w http.ResponseWriter, r *http.Request) {
	if h.library == nil {
		apiError(w, http.StatusNotFound, "invalid_request_error", "", "this server keeps no voice library")
		return
	}
	// A voice is encoded by the loaded model's codec: without a model the
	// request waits for one, as a speech request does (503).
	if _, err := h.engine(); err != nil {
		apiError(w, http.StatusServiceUnavailable, "server_error", "", err.Error())
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.library.MaxUploadBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "the body must be multipart/form-data with name, transcript and audio: "+err.Error())
		return
	}
	fields := map[string][]byte{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			bodyReadError(w, "", err)
			return
		}
		name := part.FormName()
		if name != "name" && name != "transcript" && name != "audio" {
			apiError(w, http.StatusBadRequest, "invalid_request_error", name, fmt.Sprintf("unknown field %q: give name, transcript and audio", name))
			return
		}
		if _, dup := fields[name]; dup {
			apiError(w, http.StatusBadRequest, "invalid_request_error", name, fmt.Sprintf("%s given twice", name))
			return
		}
		limit := int64(maxFieldBytes)
		if name == "audio" && h.library.MaxRecordingBytes > 0 {
			limit = h.library.MaxRecordingBytes
		}
		b, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			bodyReadError(w, name, err)
			return
		}
		if int64(len(b)) > limit {
			apiError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", name, fmt.Sprintf("%s is larger than %d bytes", name, limit))
			return
		}
		fields[name] = b
	}
	for _, f := range []string{"name", "transcript", "audio"} {
		if len(fields[f]) == 0 {
			apiError(w, http.StatusBadRequest, "invalid_request_error", f, f+" is required")
			return
		}
	}
	name := string(fields["name"])
	if err := (voice.Voice{Name: name, Sampling: api.DefaultSampling()}).Validate(); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "name", err.Error())
		return
	}
	voices, err := h.library.Create(name, string(fields["transcript"]), fields["audio"])
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "audio", err.Error())
		return
	}
	for _, v := range voices {
		if v.Name == name {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			writeJSONBody(w, voiceObject(v))
			return
		}
	}
	apiError(w, http.StatusInternalServerError, "server_error", "", "the voice was not saved")
}

// maxFieldBytes bounds the text fields of an upload (name, transcript):
// their own limits are far smaller and said by the library.
const maxFieldBytes = 64 << 10

// bodyReadError answers a body that could not be read: 413 past the body
// limit, 408 when it did not arrive in time (the server's read timeout),
// else 400. param names the field being read, if any.
func bodyReadError(w http.ResponseWriter, param string, err error) {
	var tooBig *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooBig):
		apiError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", param, fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		w.Header().Set("Connection", "close")
		apiError(w, http.StatusRequestTimeout, "invalid_request_error", param, "the body did not arrive in time: send it at once")
	default:
		apiError(w, http.StatusBadRequest, "invalid_request_error", param, "reading the body: "+err.Error())
	}
}
