package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"proscenium/app/settings"
	"proscenium/app/takes"
	"proscenium/app/voice"
	"proscenium/engine/api"
)

// fuzzService has a method for each kind of argument app.Service's
// methods take (the server cannot import app, its parent).
type fuzzService struct{}

func (*fuzzService) Speak(api.SpeechRequest) error                         { return nil }
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

// protectHosts are Host headers with the verdict the policy (a loopback
// name: localhost, 127.0.0.0/8, ::1) gives them, written out by hand from
// that rule and RFC 3986's host syntax, apart from the server's own code:
// FuzzProtect's oracle. Spellings whose verdict the rule leaves open (an
// unbracketed IPv6 address) are left out.
var protectHosts = []struct {
	host     string
	loopback bool
}{
	{"127.0.0.1", true}, {"127.0.0.1:7860", true}, {"127.0.0.2:80", true}, {"127.255.255.254:1", true},
	{"localhost", true}, {"localhost:7860", true}, {"LocalHost:7860", true},
	{"[::1]", true}, {"[::1]:7860", true}, {"[0:0:0:0:0:0:0:1]:80", true}, {"[::ffff:127.0.0.1]:80", true},
	{"", false}, {"0.0.0.0", false}, {"0.0.0.0:7860", false}, {"128.0.0.1", false}, {"126.255.255.255", false},
	{"10.0.0.1", false}, {"192.168.1.1:7860", false}, {"evil.example", false}, {"evil.example:7860", false},
	{"localhost.evil.example", false}, {"127.0.0.1.nip.io:7860", false}, {"localhost.", false}, {"localhostx", false},
	{"[::]", false}, {"[::2]:80", false}, {"[fe80::1]", false}, {"127.1", false}, {"2130706433", false},
	{"0x7f000001", false}, {"127.0.0.1:7860:1", false}, {"user@127.0.0.1", false},
}

// protectOrigins are Origin headers built from the request's Host, with
// whether each is that server's own origin (RFC 6454: scheme "http" or
// "https", the same host and port, no path); "" is no Origin header.
var protectOrigins = []struct {
	origin func(host string) string
	same   bool
}{
	{func(string) string { return "" }, true},
	{func(h string) string { return "http://" + h }, true},
	{func(h string) string { return "https://" + h }, true},
	{func(h string) string { return "http://" + strings.ToUpper(h) }, true},
	{func(h string) string { return "http://" + h + "/" }, false},
	{func(h string) string { return "http://" + h + "/api" }, false},
	{func(h string) string { return "ws://" + h }, false},
	{func(h string) string { return "file://" + h }, false},
	{func(h string) string { return "http://" + h + ".evil.example" }, false},
	{func(h string) string { return "http://" + otherPort(h) }, false},
	{func(string) string { return "null" }, false},
	{func(string) string { return "http://evil.example" }, false},
	{func(string) string { return "https://localhost.evil.example:7860" }, false},
}

// otherPort is host with another, non-default port.
func otherPort(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		return host[:i] + ":7861"
	}
	return host + ":7861"
}

// jsonTypes are Content-Types with whether they declare JSON (the media
// type application/json, any case, with parameters); others are not judged.
var jsonTypes = map[string]bool{
	"application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true, " application/json ;x=y": true,
	"": false, "text/plain": false, "application/x-www-form-urlencoded": false, "multipart/form-data": false,
	"application/jsonx": false, "text/json": false, "application/json-patch+json": false,
}

// FuzzProtect: whatever Host, Origin, Content-Type, method and body a
// request carries, Protect never panics and always forbids framing. With
// Host and Origin from the tables above (picks below their lengths) it
// passes a request to the handler exactly when the table allows both and,
// for POST, PUT and PATCH, the body is valid UTF-8 declared as JSON; a body
// that passes reaches the handler unchanged. Picks past the tables use the
// fuzzed strings, judged on the rest only. (It used to judge with the
// policy's own hostOnly, isLoopbackHost and sameOrigin: a bug in them was
// its own oracle.)
func FuzzProtect(f *testing.F) {
	f.Add(uint8(1), uint8(1), "", "", "application/json", "POST", []byte(`[]`))
	f.Add(uint8(18), uint8(11), "", "", "text/plain", "POST", []byte("{\"input\":\"\xff\"}"))
	f.Add(uint8(8), uint8(2), "", "", "application/json; charset=utf-8", "GET", []byte{})
	f.Add(uint8(4), uint8(10), "", "", "", "OPTIONS", []byte{})
	f.Add(uint8(255), uint8(255), "evil.example", "http://evil.example", "application/json", "POST", []byte(`{}`))
	// Every Host with every Origin of the tables, so a plain go test runs
	// the whole oracle.
	for hi := range protectHosts {
		for oi := range protectOrigins {
			f.Add(uint8(hi), uint8(oi), "", "", "application/json", "POST", []byte(`{"text":"é"}`))
		}
	}
	f.Fuzz(func(t *testing.T, hostPick, originPick uint8, rawHost, rawOrigin, ct, method string, body []byte) {
		host, origin, judged, allowed := rawHost, rawOrigin, true, true
		if int(hostPick) < len(protectHosts) {
			hc := protectHosts[hostPick]
			host, allowed = hc.host, hc.loopback
		} else {
			judged = false
		}
		if int(originPick) < len(protectOrigins) {
			oc := protectOrigins[originPick]
			origin, allowed = oc.origin(host), allowed && oc.same
		} else if rawOrigin != "" {
			judged = false
		}
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
		withBody := method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
		if passed && withBody && (!utf8.Valid(body) || !bytes.Equal(got, body)) {
			t.Fatalf("%s body %q passed as %q", method, body, got)
		}
		if !judged {
			return
		}
		want := allowed
		if withBody {
			isJSON, known := jsonTypes[ct]
			if !known {
				if passed && !allowed {
					t.Fatalf("Host %q, Origin %q passed (%s, Content-Type %q)", host, origin, method, ct)
				}
				return
			}
			want = allowed && isJSON && utf8.Valid(body)
		}
		if passed != want {
			t.Fatalf("Host %q, Origin %q, %s with Content-Type %q and a %d-byte body (valid UTF-8 %v): passed %v, the table says %v (status %d)",
				host, origin, method, ct, len(body), utf8.Valid(body), passed, want, rec.Code)
		}
	})
}
