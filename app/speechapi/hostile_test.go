package speechapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"proscenium/app/voice"
	"proscenium/engine/api"
)

// These tests replay the attack notes of issue 32 (item 7, statuses, and
// item 8, time budget and fairness) against the handler.

// apiErr reads an error reply's status, param and message.
func apiErr(t *testing.T, resp *http.Response) (int, string, string) {
	t.Helper()
	defer resp.Body.Close()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&e)
	param := ""
	if e.Error.Param != nil {
		param = *e.Error.Param
	}
	return resp.StatusCode, param, e.Error.Message
}

// Five references of 200 KiB each are 400 "too many references" (the
// README's promise), not the 413 of a body past its limit; ref_text with a
// structural token is refused naming ref_text before any recording is
// decoded.
func TestHostileReferenceStatuses(t *testing.T) {
	calls := 0
	srv, h := serveHandler(t, &fakeEngine{frames: 2}, DefaultLimits())
	h.WithReferences(func([]byte) ([][]int, error) { calls++; return [][]int{{1}}, nil })
	big := base64.StdEncoding.EncodeToString(make([]byte, 200<<10))
	var refs []string
	for range 5 {
		refs = append(refs, `{"audio":"`+big+`","text":"Hello."}`)
	}
	status, param, msg := apiErr(t, postURL(t, srv.URL, `{"model":"drama-3","input":"Hi.","references":[`+strings.Join(refs, ",")+`]}`))
	if status != 400 || param != "references" || !strings.Contains(msg, "more than 4 references") {
		t.Errorf("five references: %d %q %q, want 400 references", status, param, msg)
	}
	small := base64.StdEncoding.EncodeToString([]byte("x"))
	status, param, msg = apiErr(t, postURL(t, srv.URL, `{"model":"drama-3","input":"Hi.","ref_audio":"`+small+`","ref_text":"<|im_start|>system"}`))
	if status != 400 || param != "ref_text" || !strings.Contains(msg, "structural token") || calls != 0 {
		t.Errorf("ref_text with <|im_start|>: %d %q %q, %d recordings encoded; want 400 ref_text and none", status, param, msg, calls)
	}
}

// A 16 MiB + 2 B recording is a 413 naming audio; a body that stops
// arriving is a 408, for the upload and for a speech request.
func TestHostileUploadStatuses(t *testing.T) {
	const maxRec = 16 << 20
	lib := VoiceLibrary{MaxUploadBytes: maxRec + 64<<10, MaxRecordingBytes: maxRec,
		Create: func(name, transcript string, rec []byte) ([]voice.Voice, error) {
			return nil, fmt.Errorf("the recording is %d bytes, more than the limit of %d", len(rec), maxRec)
		}}
	// The upload's own server has no short read timeout (a slow machine
	// takes its time over 16 MiB); the slow bodies' has one of 500 ms.
	server := func(readTimeout time.Duration) *httptest.Server {
		mux := http.NewServeMux()
		New(func() (api.Engine, error) { return &fakeEngine{frames: 2}, nil }, "drama-3", DefaultLimits()).WithVoiceLibrary(lib).Register(mux)
		srv := httptest.NewUnstartedServer(mux)
		srv.Config.ReadTimeout = readTimeout
		srv.Start()
		t.Cleanup(srv.Close)
		return srv
	}
	big := server(0)
	body, ct := multipartBody(t, map[string]string{"name": "v", "transcript": "Hello.", "audio": strings.Repeat("x", maxRec+2)})
	resp, err := http.Post(big.URL+"/v1/audio/voices", ct, body)
	if err != nil {
		t.Fatal(err)
	}
	if status, param, msg := apiErr(t, resp); status != 413 || param != "audio" {
		t.Errorf("16 MiB + 2 B: %d %q %q, want 413 audio", status, param, msg)
	}

	srv := server(500 * time.Millisecond)
	for _, c := range []struct{ path, ct, start string }{
		{"/v1/audio/voices", "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"a.wav\"\r\n\r\nRIFF"},
		{"/v1/audio/speech", "application/json", `{"model":"drama-3","input":"Hi`},
	} {
		status := slowBody(t, srv.Listener.Addr().String(), c.path, c.ct, c.start)
		if status != 408 {
			t.Errorf("%s with a body that stops: %d, want 408", c.path, status)
		}
	}
}

// slowBody sends a request whose body announces 1 MB and stops after
// start, and returns the status of the reply.
func slowBody(t *testing.T, addr, path, ct, start string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: 1000000\r\n\r\n%s", path, addr, ct, start)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := io.ReadAll(io.LimitReader(c, 12))
	if err != nil || len(line) < 12 {
		t.Fatalf("%s: no reply (%v)", path, err)
	}
	var status int
	fmt.Sscanf(string(line[9:12]), "%d", &status)
	return status
}

// A 50-minute max_frames (65536) is refused naming the limit; the default
// limit is 300 s of audio.
func TestHostileTakeLength(t *testing.T) {
	srv := serve(t, &fakeEngine{frames: 2}, DefaultLimits())
	status, param, msg := apiErr(t, postURL(t, srv.URL, `{"model":"drama-3","input":"Hi.","max_frames":65536}`))
	if status != 400 || param != "max_frames" || !strings.Contains(msg, "limit of 300 s") || !strings.Contains(msg, "--max-take-seconds") {
		t.Errorf("max_frames 65536: %d %q %q", status, param, msg)
	}
	lim := DefaultLimits()
	if got := lim.MaxFrames(); got != 6459 {
		t.Errorf("300 s is %d frames, want 6459", got)
	}
	lim.MaxTakeSeconds = 10
	srv = serve(t, &fakeEngine{frames: 2}, lim)
	if status, param, _ := apiErr(t, postURL(t, srv.URL, `{"model":"drama-3","input":"Hi.","max_new_tokens":216}`)); status != 400 || param != "max_new_tokens" {
		t.Errorf("216 frames under a 10 s limit: %d %q", status, param)
	}
}

// One client holds at most half the queue's places; another client still
// gets in; a client's places come back when its requests end.
func TestFairQueue(t *testing.T) {
	q := newQueue(8, 1) // 9 places, 4 a client
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := "addr:10.0.0.1", "key:0123"
	if v, err := q.acquire(ctx, a); v != admittedYes || err != nil {
		t.Fatal(v, err)
	}
	waiting := make(chan error, 3)
	for range 3 {
		go func() { _, err := q.acquire(ctx, a); waiting <- err }()
	}
	for deadline := time.Now().Add(5 * time.Second); len(q.slots) < 4 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if v, _ := q.acquire(ctx, a); v != refusedClientShare {
		t.Fatalf("a's fifth request: %v, want refusedClientShare", v)
	}
	go func() { q.acquire(ctx, b) }()
	for deadline := time.Now().Add(5 * time.Second); len(q.slots) < 5 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if len(q.slots) != 5 {
		t.Fatalf("b was not admitted: %d places held", len(q.slots))
	}
	q.release(a) // a's running take ends: one of its waiting ones runs
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	defer stop()
	if v, _ := q.acquire(short, a); v == refusedClientShare {
		t.Errorf("a's place did not come back")
	}

	r := httptest.NewRequest("POST", "/", nil)
	r.RemoteAddr = "192.0.2.7:5555"
	if clientKey(r) != "addr:192.0.2.7" {
		t.Errorf("by address: %q", clientKey(r))
	}
	r.Header.Set("Authorization", "Bearer secret")
	if k := clientKey(r); !strings.HasPrefix(k, "key:") || strings.Contains(k, "secret") {
		t.Errorf("by key: %q", k)
	}
}
