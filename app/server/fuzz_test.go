package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"proscenium/app/settings"
	"proscenium/app/takes"
	"proscenium/app/voice"
	"proscenium/engine"
)

// fuzzService has a method for each kind of argument app.Service's
// methods take (the server cannot import app, its parent).
type fuzzService struct{}

func (*fuzzService) Speak(engine.SpeechRequest) error                      { return nil }
func (*fuzzService) LoadModel(string) error                                { return nil }
func (*fuzzService) DeleteTake(int) error                                  { return nil }
func (*fuzzService) TakesLimitEffect(int64) error                          { return nil }
func (*fuzzService) PausePlayback(bool) error                              { return nil }
func (*fuzzService) SetSettings(settings.Settings) error                   { return nil }
func (*fuzzService) ExportTake(takes.ExportRequest) error                  { return nil }
func (*fuzzService) RerunTake(takes.Rerun) error                           { return nil }
func (*fuzzService) SaveVoice(voice.Voice) error                           { return nil }
func (*fuzzService) CreateVoice(name, transcript string, rec []byte) error { return nil }
func (*fuzzService) Takes() []takes.Take                                   { return nil }

// FuzzDecodeArgs: the HTTP argument decoder refuses or decodes, never panics,
// and what it decodes has the method's argument types.
func FuzzDecodeArgs(f *testing.F) {
	f.Add([]byte(`[{"text":"x","sampling":{"temperature":1,"top_p":1,"top_k":0},"seed":0,"max_frames":1}]`))
	f.Add([]byte(`["/tmp"]`))
	f.Add([]byte(``))
	f.Add([]byte(`[1,2]`))
	methods, err := apiMethods(&fuzzService{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for name, m := range methods {
			args, err := decodeArgs(body, m.args)
			if err != nil {
				continue
			}
			if len(args) != len(m.args) {
				t.Fatalf("%s: %d args decoded for %d parameters", name, len(args), len(m.args))
			}
			for i, a := range args {
				if a.Type() != m.args[i] {
					t.Fatalf("%s: argument %d has type %v, want %v", name, i, a.Type(), m.args[i])
				}
			}
		}
	})
}

// FuzzProtect: whatever Host, Origin, Content-Type and body a request
// carries, Protect never panics, and what it lets through is what the
// policy allows: a loopback Host, no foreign Origin, and for a POST a JSON
// content type and a valid UTF-8 body that reaches the handler unchanged.
func FuzzProtect(f *testing.F) {
	f.Add("127.0.0.1:7860", "", "application/json", "POST", []byte(`[]`))
	f.Add("evil.example", "http://evil.example", "text/plain", "POST", []byte("{\"input\":\"\xff\"}"))
	f.Add("[::1]:80", "http://[::1]:80", "application/json; charset=utf-8", "GET", []byte{})
	f.Add("localhost", "null", "", "OPTIONS", []byte{})
	f.Fuzz(func(t *testing.T, host, origin, ct, method string, body []byte) {
		var got []byte
		passed := false
		h := Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			passed = true
			got, _ = io.ReadAll(r.Body)
		}), HTTPPolicy{})
		req, err := http.NewRequest(method, "http://127.0.0.1/api/Takes", bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Fatal("a response without X-Frame-Options")
		}
		if !passed {
			return
		}
		if !isLoopbackHost(hostOnly(host)) {
			t.Fatalf("Host %q passed", host)
		}
		if origin != "" && !sameOrigin(origin, host) {
			t.Fatalf("Origin %q passed for Host %q", origin, host)
		}
		if method == http.MethodPost && (!utf8.Valid(body) || !bytes.Equal(got, body)) {
			t.Fatalf("POST body %q passed as %q", body, got)
		}
	})
}
