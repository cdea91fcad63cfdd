package speechapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"proscenium/app/voice"
	"proscenium/engine/api"
)

// FuzzUploadVoice: no multipart body panics POST /v1/audio/voices; every
// answer is 201 or a 400/413, and what reaches the library has each field
// once, within its limit.
func FuzzUploadVoice(f *testing.F) {
	good, ct := multipartBody(f, map[string]string{"name": "v", "transcript": "Hello.", "audio": "RIFF....WAVE"})
	boundary := ct[len("multipart/form-data; boundary="):]
	f.Add(good.Bytes())
	f.Add([]byte("--" + boundary + "\r\nContent-Disposition: form-data; name=\"audio\"\r\n\r\nx\r\n--" + boundary + "--\r\n"))
	f.Add([]byte("--" + boundary + "--\r\n"))
	const maxRec = 64
	f.Fuzz(func(t *testing.T, body []byte) {
		lib := VoiceLibrary{MaxUploadBytes: 1 << 10, MaxRecordingBytes: maxRec,
			Create: func(name, transcript string, rec []byte) ([]voice.Voice, error) {
				if len(rec) == 0 || len(rec) > maxRec || name == "" || transcript == "" {
					t.Fatalf("the library got name %q, transcript %q, %d bytes of audio", name, transcript, len(rec))
				}
				return []voice.Voice{{Name: name, Sampling: api.DefaultSampling()}}, nil
			}}
		h := New(func() (api.Engine, error) { return &fakeEngine{}, nil }, "drama-3", DefaultLimits()).WithVoiceLibrary(lib)
		mux := http.NewServeMux()
		h.Register(mux)
		r := httptest.NewRequest("POST", "/v1/audio/voices", bytes.NewReader(body))
		r.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		switch w.Code {
		case 201, 400, 413:
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}
