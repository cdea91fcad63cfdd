package app

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gorilla/websocket"

	"proscenium/app/internal/enginetest"
	"proscenium/app/model"
	"proscenium/app/server"
	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/api"
)

func newTestServer(t *testing.T, open model.Opener) (*httptest.Server, *Service, *studio.Hub) {
	t.Helper()
	hub := studio.NewHub()
	svc, err := New(Config{Open: open, Events: hub})
	if err != nil {
		t.Fatal(err)
	}
	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Proscenium</title>")}}
	mux, err := NewMux(svc, hub, server.Options{UI: ui, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.Protect(mux, server.HTTPPolicy{}))
	t.Cleanup(func() { srv.Close(); Shutdown(svc) })
	return srv, svc, hub
}

func post(t *testing.T, srv *httptest.Server, method, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+"/api/"+method, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, strings.TrimSpace(string(b))
}

func TestAPICallsTheServiceMethods(t *testing.T) {
	srv, svc, _ := newTestServer(t, nil)
	speak := `[{"text":"Hello.","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"seed":3,"max_frames":50}]`
	tests := []struct {
		name, method, body string
		status             int
		want               string // exact body
	}{
		{"speak without model", "Speak", speak, 409, `{"error":"no model loaded"}`},
		{"stats without model", "Stats", "[]", 200, `{"loaded":false,"message":"no model loaded","memory":null,"last_take":null,"total_bytes":0}`},
		{"empty body is no arguments", "Takes", "", 200, `[]`},
		{"stop with nothing running", "Stop", "[]", 200, `false`},
		{"load without backend", "LoadModel", `["` + t.TempDir() + `"]`, 501, ""},
		{"load a missing path", "LoadModel", `["/no/such/dir"]`, 404, ""},
		{"invalid setting", "SetSettings", `[{"script":"","sampling":{"temperature":1,"top_p":1.5,"top_k":0},"seed":0,"max_frames":10,"model_dir":""}]`, 400, `{"error":"invalid: top_p must be in (0, 1] (1 switches it off), got 1.5"}`},
		{"unknown field", "Speak", `[{"text":"x","volume":2}]`, 400, ""},
		{"wrong argument type", "LoadModel", `[42]`, 400, ""},
		{"too many arguments", "Stats", `[1]`, 400, `{"error":"Stats: takes 0 argument(s), got 1"}`},
		{"not an array", "LoadModel", `"/tmp"`, 400, ""},
		{"trailing data", "Stats", `[] []`, 400, ""},
		{"unknown method", "Format", `[]`, 404, `{"error":"no API method \"Format\""}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv, tc.method, tc.body, nil)
			if status != tc.status || (tc.want != "" && body != tc.want) {
				t.Fatalf("got %d %s; want %d %s", status, body, tc.status, tc.want)
			}
			if status != 200 && !strings.HasPrefix(body, `{"error":"`) {
				t.Fatalf("error body is not {\"error\":…}: %s", body)
			}
		})
	}
	// The settings call that the service refused changed nothing.
	if !reflect.DeepEqual(svc.Settings(), settings.Default()) {
		t.Fatalf("settings changed: %+v", svc.Settings())
	}
}

func TestAPIRoundTripsSettings(t *testing.T) {
	srv, svc, _ := newTestServer(t, nil)
	want := settings.Default()
	want.Script, want.Seed, want.Sampling.Temperature = "Über — naïve.", settings.MaxSeed, 0.65
	arg, _ := json.Marshal([]settings.Settings{want})
	status, body := post(t, srv, "SetSettings", string(arg), nil)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var got settings.Settings
	if err := json.Unmarshal([]byte(body), &got); err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(svc.Settings(), want) {
		t.Fatalf("answer %+v (%v), stored %+v, want %+v", got, err, svc.Settings(), want)
	}
}

func TestAPIRefusesCrossSiteAndForeignHosts(t *testing.T) {
	srv, _, _ := newTestServer(t, nil)
	tests := []struct {
		name   string
		header map[string]string
		status int
	}{
		{"same origin", map[string]string{"Origin": srv.URL}, 200},
		{"other origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"form post", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"text/plain post", map[string]string{"Content-Type": "text/plain"}, 415},
		{"json with charset", map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200},
		{"DNS-rebound host", map[string]string{"Host": "attacker.example"}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", srv.URL+"/api/Stats", strings.NewReader("[]"))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("got %d, want %d", res.StatusCode, tc.status)
			}
		})
	}
}

func TestAPIServesTheUI(t *testing.T) {
	srv, _, _ := newTestServer(t, nil)
	res, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "<title>Proscenium</title>") {
		t.Fatalf("GET /: %d %q", res.StatusCode, b)
	}
}

func TestEventsReachTheWebSocket(t *testing.T) {
	eng := &testEngine{frames: 3, tick: time.Millisecond}
	srv, svc, _ := newTestServer(t, func(string) (api.Engine, error) { return eng, nil })
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	waitFor(t, func() bool { // the handler subscribes after the upgrade
		status, _ := post(t, srv, "Stop", "[]", nil)
		return status == 200 && svc.events.Subscribers() > 0
	})

	dir := t.TempDir()
	if _, err := svc.LoadModel(dir); err != nil {
		t.Fatal(err)
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var first struct {
		Name string            `json:"name"`
		Data model.ModelStatus `json:"data"`
	}
	if err := ws.ReadJSON(&first); err != nil {
		t.Fatal(err)
	}
	if first.Name != studio.EventModel || first.Data.State != model.ModelLoading || first.Data.Dir != dir {
		t.Fatalf("first event: %+v", first)
	}
}

func TestWebSocketRefusesOtherOrigins(t *testing.T) {
	srv, _, _ := newTestServer(t, nil)
	h := http.Header{"Origin": {"http://evil.example"}}
	_, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/api/events", h)
	if err == nil || res == nil || res.StatusCode != 403 {
		t.Fatalf("cross-origin WebSocket: err=%v res=%v", err, res)
	}
}

// Every exported Service method is callable over HTTP (Wails binds the
// same set): each answers a call with too many arguments by counting its
// own, never with "no API method" (the call itself is not made).
func TestAPIMethodsMirrorTheService(t *testing.T) {
	srv, _, _ := newTestServer(t, nil)
	typ := reflect.TypeFor[*Service]()
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		status, body := post(t, srv, m.Name, `[1,2,3,4,5]`, nil)
		want := fmt.Sprintf("takes %d argument(s), got 5", m.Type.NumIn()-1)
		if status != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("method %s over HTTP: %d %s, want 400 %q", m.Name, status, body, want)
		}
	}
	if status, _ := post(t, srv, "NoSuchMethod", `[]`, nil); status != http.StatusNotFound {
		t.Errorf("an unknown method answered %d", status)
	}
}

// Browser mode: a take's chunks reach the WebSocket as binary PCM messages
// with the engine's chunk boundaries, and GET /api/takes/{id}/pcm returns
// the whole take.
func TestBrowserGetsThePCM(t *testing.T) {
	srv, svc, _ := newTestServer(t, func(string) (api.Engine, error) { return &enginetest.PCM{Frames: 5}, nil })
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	waitFor(t, func() bool { return svc.events.Subscribers() > 0 })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Speak(speech("Stream it.")); err != nil {
		t.Fatal(err)
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var bounds [][2]uint32
	next := 0
	for next < 5*enginetest.SamplesPerFrame {
		kind, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if kind != websocket.BinaryMessage {
			continue
		}
		if string(msg[:4]) != "PCM1" || binary.LittleEndian.Uint32(msg[4:]) != 1 {
			t.Fatalf("binary message header %q", msg[:20])
		}
		from, to, n := binary.LittleEndian.Uint32(msg[8:]), binary.LittleEndian.Uint32(msg[12:]), int(binary.LittleEndian.Uint32(msg[16:]))
		pcm := decodeFloat32LE(msg[20:])
		if len(pcm) != n || n != int(to-from)*enginetest.SamplesPerFrame || int(from)*enginetest.SamplesPerFrame != next {
			t.Fatalf("chunk [%d, %d) of %d samples after %d", from, to, len(pcm), next)
		}
		for i, v := range pcm {
			if v != enginetest.Signal(next+i) {
				t.Fatalf("streamed sample %d: %v", next+i, v)
			}
		}
		next += n
		bounds = append(bounds, [2]uint32{from, to})
	}
	if fmt.Sprint(bounds) != "[[0 1] [1 3] [3 5]]" {
		t.Fatalf("chunks %v, want the policy's [0,1) [1,3) [3,5)", bounds)
	}
	waitFor(t, func() bool { return svc.Takes()[0].State == takes.TakeFinished })
	res, err := http.Get(srv.URL + "/api/takes/1/pcm")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || len(body) != 4*5*enginetest.SamplesPerFrame || decodeFloat32LE(body)[777] != enginetest.Signal(777) {
		t.Fatalf("GET pcm: %d, %d bytes", res.StatusCode, len(body))
	}
	if res, _ := http.Get(srv.URL + "/api/takes/9/pcm"); res.StatusCode != 404 {
		t.Fatalf("missing take: %d", res.StatusCode)
	}
}

// A server reachable from the network does not write files where callers
// say: every Export method of the service is refused there.
func TestExportIsLocalOnly(t *testing.T) {
	hub := studio.NewHub()
	svc, err := New(Config{Events: hub})
	if err != nil {
		t.Fatal(err)
	}
	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}
	mux, err := NewMux(svc, hub, server.Options{UI: ui, LoopbackOnly: false})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.Protect(mux, server.HTTPPolicy{}))
	defer srv.Close()
	status, body := post(t, srv, "ExportTake", `[{"id":1,"path":"/tmp/x.wav","format":"wav-pcm16"}]`, nil)
	if status != 403 || !strings.Contains(body, "loopback") {
		t.Fatalf("export on a network server: %d %s", status, body)
	}
	methods := reflect.TypeOf(svc)
	for i := range methods.NumMethod() {
		name := methods.Method(i).Name
		if !strings.HasPrefix(name, "Export") {
			continue
		}
		if status, body := post(t, srv, name, `[]`, nil); status != 403 {
			t.Errorf("%s on a network server: %d %s", name, status, body)
		}
	}
	if status, _ := post(t, srv, "Takes", `[]`, nil); status != 200 {
		t.Fatalf("other methods: %d", status)
	}
}

// Item 4: a load that fails (a typo, a directory that is no checkpoint)
// keeps the model that was working; only a load that succeeds replaces it.
func TestFailedLoadKeepsTheWorkingModel(t *testing.T) {
	good := t.TempDir()
	var opened []*testEngine
	srv, _, _ := newTestServer(t, func(dir string) (api.Engine, error) {
		if dir != good {
			return nil, fmt.Errorf("%s/config.json: %w", dir, fs.ErrNotExist)
		}
		e := &testEngine{frames: 2, tick: time.Millisecond}
		opened = append(opened, e)
		return e, nil
	})
	if status, body := post(t, srv, "LoadModel", `["`+good+`"]`, nil); status != 200 {
		t.Fatalf("first load: %d %s", status, body)
	}
	if status, body := post(t, srv, "LoadModel", `["/etc"]`, nil); status != 404 || !strings.Contains(body, "stays loaded") {
		t.Fatalf("load of /etc: %d %s", status, body)
	}
	_, body := post(t, srv, "ModelStatus", `[]`, nil)
	var st model.ModelStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil || st.State != model.ModelLoaded || st.Dir != good || !strings.Contains(st.Error, "/etc") {
		t.Fatalf("after the failed load: %s", body)
	}
	if isClosed(opened[0]) {
		t.Fatal("the working model was closed")
	}
	if status, body := post(t, srv, "Speak", `[{"text":"Still here.","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"seed":1,"max_frames":2}]`, nil); status != 200 {
		t.Fatalf("speak after the failed load: %d %s", status, body)
	}
	// A load that works replaces it, closing the old one.
	post(t, srv, "Stop", `[]`, nil)
	if status, body := post(t, srv, "LoadModel", `["`+good+`"]`, nil); status != 200 || !isClosed(opened[0]) || len(opened) != 2 {
		t.Fatalf("reload: %d %s, first closed %v", status, body, isClosed(opened[0]))
	}
}

func isClosed(e *testEngine) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Issue 32: /api/InspectModel took any path and said which exist and
// their sizes. Over HTTP it now answers only under the model roots the
// studio knows (here the settings' model folder); elsewhere, and through a
// link that leads elsewhere, it is a 403 that says nothing of the path.
func TestInspectModelOverHTTPStaysUnderTheRoots(t *testing.T) {
	srv, svc, _ := newTestServer(t, nil)
	root := t.TempDir()
	st := svc.Settings()
	st.ModelDir = root
	if _, err := svc.SetSettings(st); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(root, "models", "one")
	os.MkdirAll(inside, 0o755)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "config.json"), []byte(`{"secret": 1}`), 0o644)
	link := filepath.Join(root, "escape")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{outside, link, "/etc", root + "/../" + filepath.Base(outside)} {
		status, body := post(t, srv, "InspectModel", `["`+dir+`"]`, nil)
		if status != 403 || strings.Contains(body, "secret") || strings.Contains(body, "config") {
			t.Errorf("%s: %d %s", dir, status, body)
		}
	}
	if status, body := post(t, srv, "InspectModel", `["`+inside+`"]`, nil); status != 200 {
		t.Errorf("under the settings' model folder: %d %s", status, body)
	}
	// The window calls the service directly: any folder.
	if _, err := svc.InspectModel(outside); err != nil {
		t.Errorf("the window's call: %v", err)
	}
}
