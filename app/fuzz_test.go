package app

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLoadSettings: any file either loads into settings that validate and
// survive an encode/load round trip, or is refused with an error; never a panic.
func FuzzLoadSettings(f *testing.F) {
	f.Add([]byte(`{"script":"Hi","sampling":{"temperature":0.7,"top_p":0.9,"top_k":30},"seed":3,"max_frames":100,"model_dir":"/m"}`))
	f.Add([]byte(`{"seed":9007199254740992}`))
	f.Add([]byte(`{"sampling":{"top_p":1e-45}}`))
	f.Add([]byte(`{} x`))
	f.Add([]byte(`{"voices":[{"name":"narrator","speaker":3,"direction":"calm","sampling":{"temperature":0.7,"top_p":0.9,"top_k":30},"seed":5},{"name":"nova","speaker":null,"direction":"","sampling":{"temperature":1,"top_p":1,"top_k":0},"seed":0}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSettings(p)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("loaded settings do not validate: %v", err)
		}
		out, err := json.Marshal(s) // SaveSettings' encoding, without its fsync
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := LoadSettings(p)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, s)
		}
	})
}

// FuzzDecodeArgs: the HTTP argument decoder refuses or decodes, never panics,
// and what it decodes has the method's argument types.
func FuzzDecodeArgs(f *testing.F) {
	f.Add([]byte(`[{"text":"x","sampling":{"temperature":1,"top_p":1,"top_k":0},"seed":0,"max_frames":1}]`))
	f.Add([]byte(`["/tmp"]`))
	f.Add([]byte(``))
	f.Add([]byte(`[1,2]`))
	methods, err := apiMethods(&Service{})
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

// FuzzLoadTake: any take.json either loads into a take that validates, or
// is refused with an error; never a panic.
func FuzzLoadTake(f *testing.F) {
	f.Add([]byte(`{"format":1,"take":{"id":1,"name":"","request":{"text":"Hi.","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"seed":0,"max_frames":10},"state":"finished","frames":1,"finish":{"reason":"stop","frames":1,"audio_seconds":0.046,"time_to_first_audio":1,"elapsed":1,"real_time_factor":0.1,"stages":{}},"error":"","started_ms":0,"frames_per_second":0,"samples":4,"sample_rate":44100,"underruns":0,"stored":false},"codes":[[1,2]],"pcm_file":"pcm.f32","pcm_format":"float32le"}`))
	f.Add([]byte(`{"format":1,"take":{"id":1,"state":"failed","samples":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := parseTakeMeta(data, 1)
		if err != nil {
			return
		}
		tk := tf.Take
		if tk.ID != 1 || tk.Samples < 0 || tk.SampleRate != OutputSampleRate || ValidateSpeech(tk.Request) != nil ||
			(tk.State != TakeFinished && tk.State != TakeFailed) || (tk.State == TakeFinished && len(tf.Codes) != tk.Finish.Frames) {
			t.Fatalf("accepted an invalid take: %+v", tk)
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

// FuzzTempTakeID: a name is one of our temporary take directories exactly
// when it reads .take-<id>-<digits>, and then names that id.
func FuzzTempTakeID(f *testing.F) {
	for _, s := range []string{".take-7-123", ".take-0-1", ".take-7-", ".take-x-1", "7", ".take-7-12a", ".take--1-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, ok := tempTakeID(name)
		if !ok {
			return
		}
		rest, _ := strings.CutPrefix(name, tempTakePrefix+strconv.Itoa(id)+"-")
		if id <= 0 || rest == name || rest == "" || strings.Trim(rest, "0123456789") != "" {
			t.Fatalf("%q read as temporary take %d", name, id)
		}
	})
}
