package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gorilla/websocket"

	"proscenium/app/server"
	"proscenium/app/speechapi"
	"proscenium/app/studio"
	"proscenium/engine/api"
)

// policyServer runs what `proscenium serve --ui --model` runs: the studio
// routes and the speech API, behind Protect, through Serve on a real
// loopback listener. It returns the base URL.
func policyServer(t *testing.T, pol server.HTTPPolicy, lim server.ServeLimits, extra func(*http.ServeMux)) string {
	t.Helper()
	hub := studio.NewHub()
	svc, err := New(Config{Events: hub})
	if err != nil {
		t.Fatal(err)
	}
	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Proscenium</title>")}}
	mux, err := NewMux(svc, hub, server.Options{UI: ui, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	speechapi.New(func() (api.Engine, error) { return LoadedEngine(svc) }, "drama-3", speechapi.DefaultLimits()).Register(mux)
	if extra != nil {
		extra(mux)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, server.Protect(mux, pol), lim) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		Shutdown(svc)
	})
	return "http://" + ln.Addr().String()
}

// route is one of each kind the server answers.
type route struct{ method, path, body string }

var everyRoute = []route{
	{"GET", "/", ""},
	{"GET", "/healthz", ""},
	{"GET", "/v1/models", ""},
	{"POST", "/v1/audio/speech", `{"model":"drama-3","input":"Hello.","voice":"default"}`},
	{"POST", "/api/Takes", `[]`},
	{"GET", "/api/takes/1/pcm", ""},
}

func do(t *testing.T, base string, rt route, header map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if rt.body != "" {
		body = strings.NewReader(rt.body)
	}
	req, _ := http.NewRequest(rt.method, base+rt.path, body)
	if rt.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// Item 9: a foreign page (Origin) or a DNS-rebound name (Host) gets nothing
// from any route; a text/plain POST (no CORS preflight) is refused.
func TestPolicyRefusesForeignOriginsAndHostsOnEveryRoute(t *testing.T) {
	base := policyServer(t, server.HTTPPolicy{}, server.DefaultServeLimits(), nil)
	for _, rt := range everyRoute {
		for _, c := range []struct {
			name   string
			header map[string]string
		}{
			{"foreign origin", map[string]string{"Origin": "http://evil.example"}},
			{"null origin", map[string]string{"Origin": "null"}},
			{"rebound host", map[string]string{"Host": "evil.example"}},
			{"rebound host with port", map[string]string{"Host": "evil.example:" + base[strings.LastIndex(base, ":")+1:]}},
		} {
			res, body := do(t, base, rt, c.header)
			if res.StatusCode != 403 || !strings.Contains(body, "refused") && !strings.Contains(body, "loopback") {
				t.Errorf("%s %s, %s: %d %s", rt.method, rt.path, c.name, res.StatusCode, body)
			}
		}
		// The server's own origin is fine (what is answered depends on the route).
		if res, body := do(t, base, rt, map[string]string{"Origin": base}); res.StatusCode == 403 || res.StatusCode == 415 {
			t.Errorf("%s %s from its own origin: %d %s", rt.method, rt.path, res.StatusCode, body)
		}
	}
	for _, path := range []string{"/v1/audio/speech", "/api/Takes"} {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(`{"model":"drama-3","input":"Hi."}`))
			req.Header.Set("Content-Type", ct)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 415 {
				t.Errorf("POST %s as %q: %d, want 415", path, ct, res.StatusCode)
			}
		}
	}
}

// Allowed origins and hosts open the server up, and nothing else.
func TestPolicyAllowsConfiguredOriginsAndHosts(t *testing.T) {
	base := policyServer(t, server.HTTPPolicy{AllowOrigins: []string{"https://app.example"}, AllowHosts: []string{"studio.lan"}}, server.DefaultServeLimits(), nil)
	res, body := do(t, base, route{"GET", "/v1/models", ""}, map[string]string{"Origin": "https://app.example"})
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("allowed origin: %d %v %s", res.StatusCode, res.Header, body)
	}
	res, _ = do(t, base, route{"OPTIONS", "/v1/audio/speech", ""}, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
	if res.StatusCode != 204 || !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Fatalf("preflight of an allowed origin: %d %v", res.StatusCode, res.Header)
	}
	if res, _ := do(t, base, route{"OPTIONS", "/v1/audio/speech", ""}, map[string]string{"Origin": "https://other.example"}); res.StatusCode != 403 {
		t.Fatalf("preflight of another origin: %d", res.StatusCode)
	}
	if res, body := do(t, base, route{"GET", "/healthz", ""}, map[string]string{"Host": "studio.lan:8080"}); res.StatusCode != 200 {
		t.Fatalf("allowed host: %d %s", res.StatusCode, body)
	}
	if res, _ := do(t, base, route{"GET", "/healthz", ""}, map[string]string{"Host": "evil.example"}); res.StatusCode != 403 {
		t.Fatalf("other host: %d", res.StatusCode)
	}
}

// With an API key, /api/ and /v1/ need it (header, or the WebSocket
// subprotocol a browser can send); the UI's files and /healthz do not.
func TestPolicyAPIKey(t *testing.T) {
	const key = "s3cret-key.123"
	base := policyServer(t, server.HTTPPolicy{APIKey: key}, server.DefaultServeLimits(), nil)
	for _, rt := range everyRoute {
		open := rt.path == "/" || rt.path == "/healthz"
		res, body := do(t, base, rt, nil)
		if open != (res.StatusCode != 401) {
			t.Errorf("%s %s without key: %d %s", rt.method, rt.path, res.StatusCode, body)
		}
		if !open && res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without WWW-Authenticate", rt.method, rt.path)
		}
		if res, _ := do(t, base, rt, map[string]string{"Authorization": "Bearer wrong-key-456"}); !open && res.StatusCode != 401 {
			t.Errorf("%s %s with a wrong key: %d", rt.method, rt.path, res.StatusCode)
		}
		if res, body := do(t, base, rt, map[string]string{"Authorization": "Bearer " + key}); res.StatusCode == 401 || res.StatusCode == 403 {
			t.Errorf("%s %s with the key: %d %s", rt.method, rt.path, res.StatusCode, body)
		}
	}
	url := "ws" + strings.TrimPrefix(base, "http") + "/api/events"
	if _, res, err := websocket.DefaultDialer.Dial(url, nil); err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("event socket without key: %v %v", err, res)
	}
	// What the studio's page offers (frontend): its protocol, and the key.
	const wsProtocol = "proscenium"
	d := websocket.Dialer{Subprotocols: []string{wsProtocol, "bearer." + key}}
	ws, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("event socket with the key: %v", err)
	}
	if ws.Subprotocol() != wsProtocol {
		t.Fatalf("subprotocol %q, want %q (the key is never echoed)", ws.Subprotocol(), wsProtocol)
	}
	ws.Close()
	for _, bad := range []string{"", "short", "has space in it", "quote\"inside", "naïve-key-123"} {
		if err := server.ValidateAPIKey(bad); err == nil {
			t.Errorf("ValidateAPIKey(%q) accepted", bad)
		}
	}
}

// Item 10: no response may be framed by another page; the UI's pages load
// only from this server.
func TestPolicyForbidsFramingOnEveryResponse(t *testing.T) {
	base := policyServer(t, server.HTTPPolicy{}, server.DefaultServeLimits(), nil)
	for _, rt := range append(everyRoute, route{"GET", "/no-such-file.js", ""}) {
		res, _ := do(t, base, rt, nil)
		csp := res.Header.Get("Content-Security-Policy")
		if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(csp, "frame-ancestors 'none'") ||
			!strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s %s: X-Frame-Options %q, CSP %q", rt.method, rt.path, res.Header.Get("X-Frame-Options"), csp)
		}
	}
	if res, _ := do(t, base, route{"GET", "/healthz", ""}, map[string]string{"Host": "evil.example"}); res.Header.Get("X-Frame-Options") != "DENY" {
		t.Error("a refusal goes without X-Frame-Options")
	}
}

// Item 12: raw invalid UTF-8 in a JSON body is refused before any decoder
// turns it into U+FFFD.
func TestPolicyRefusesInvalidUTF8Bodies(t *testing.T) {
	base := policyServer(t, server.HTTPPolicy{}, server.DefaultServeLimits(), nil)
	for _, rt := range []route{
		{"POST", "/api/RenameTake", "[{\"id\":1,\"name\":\"bad \xff\xfe name\"}]"},
		{"POST", "/v1/audio/speech", "{\"model\":\"drama-3\",\"input\":\"Hello \xc3\x28.\",\"voice\":\"default\"}"},
		{"POST", "/api/CountTokens", "[\"\xed\xa0\x80\"]"}, // a UTF-16 surrogate spelt in UTF-8
	} {
		res, body := do(t, base, rt, nil)
		if res.StatusCode != 400 || !strings.Contains(body, "not valid UTF-8") {
			t.Errorf("%s with invalid UTF-8: %d %s", rt.path, res.StatusCode, body)
		}
	}
	// Valid multi-byte text passes the check (the API answers "no take").
	if res, body := do(t, base, route{"POST", "/api/RenameTake", `[{"id":1,"name":"café ☕"}]`}, nil); res.StatusCode != 404 {
		t.Errorf("valid UTF-8: %d %s", res.StatusCode, body)
	}
}

// Item 11: a body that is declared but never sent times out instead of
// holding the connection; a GET may not carry one.
func TestServeTimesOutAMissingBody(t *testing.T) {
	lim := server.DefaultServeLimits()
	lim.ReadTimeout = 500 * time.Millisecond
	base := policyServer(t, server.HTTPPolicy{}, lim, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/Takes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n[]")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // far beyond ReadTimeout: only a hang reaches it
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server still holds a request whose body never came")
		}
		return // the server closed the connection: also an answer
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout && res.StatusCode != http.StatusBadRequest {
		t.Fatalf("missing body: %d", res.StatusCode)
	}
}

// Item 11: the connections held open are capped; a new one is served once
// another closes.
func TestServeCapsOpenConnections(t *testing.T) {
	lim := server.DefaultServeLimits()
	lim.MaxConns = 2
	base := policyServer(t, server.HTTPPolicy{}, lim, nil)
	addr := strings.TrimPrefix(base, "http://")
	var held []net.Conn
	for range lim.MaxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n") // headers never finish
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	quick := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	if res, err := quick.Get(base + "/healthz"); err == nil {
		res.Body.Close()
		t.Fatalf("a connection beyond the cap of %d was served", lim.MaxConns)
	}
	held[0].Close()
	held = held[1:]
	patient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := patient.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("after a connection closed: %v", err)
	}
	res.Body.Close()
}

// Issue 32: 64 sockets that each send one GET /healthz (no key needed)
// and stay idle held every connection slot for the 2-minute idle timeout,
// and other clients timed out. Idle connections now give their slot to a
// new one: a keyed request is answered at once. (The client waits 5 s at
// most; before, it waited for the first idle connection to time out.)
func TestServeIdleConnectionsDoNotLockOut(t *testing.T) {
	lim := server.DefaultServeLimits()
	base := policyServer(t, server.HTTPPolicy{APIKey: "k"}, lim, nil)
	addr := strings.TrimPrefix(base, "http://")
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range lim.MaxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("healthz %d: %v", len(idle), err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close() // the connection stays open, idle
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", base+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer k")
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("with %d idle connections open: %v", len(idle), err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("keyed request: %d", res.StatusCode)
	}
}

// Item 11: ReadTimeout bounds reading the request, not the reply: a take
// that streams for longer is written whole and its request stays alive
// (net/http lifts the read deadline once the body is read).
func TestServeLetsAStreamOutliveTheReadTimeout(t *testing.T) {
	lim := server.DefaultServeLimits()
	lim.ReadTimeout = 200 * time.Millisecond
	base := policyServer(t, server.HTTPPolicy{}, lim, func(mux *http.ServeMux) {
		mux.HandleFunc("POST /v1/test/stream", func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			for i := range 8 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
				fmt.Fprintf(w, "chunk %d\n", i)
				http.NewResponseController(w).Flush()
			}
		})
	})
	_, body := do(t, base, route{"POST", "/v1/test/stream", `{}`}, nil)
	if !strings.Contains(body, "chunk 7") {
		t.Fatalf("a stream of 800 ms under a 200 ms read timeout ended early: %q", body)
	}
}
