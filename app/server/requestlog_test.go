package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAccessLogWritesOneLinePerRequest(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewRequestLogger(&buf, "json")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/take", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Finish-Reason, X-Time-To-First-Audio-Ms, X-Real-Time-Factor, X-Audio-Frames, X-Batch")
		w.Write([]byte("audio"))
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the log hides Flush from a streamed take")
		}
		w.(http.Flusher).Flush()
		w.Header().Set("X-Audio-Frames", "42")
		w.Header().Set("X-Finish-Reason", "stop")
		w.Header().Set("X-Real-Time-Factor", "0.5000")
		w.Header().Set("X-Batch", "3")
		w.Header().Set("X-Time-To-First-Audio-Ms", "41.5")
	})
	mux.HandleFunc("/refused", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	srv := httptest.NewServer(AccessLog(mux, log))
	for _, p := range []string{"/take?key=secret-in-query", "/refused", "/missing"} {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	srv.Close() // waits for the handlers: the last line is written after its reply
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	if strings.Contains(buf.String(), "secret-in-query") {
		t.Error("the query string was logged")
	}
	// Each line is written when its handler returns, which may be after the
	// client has the reply and sent the next request: find lines by path.
	rec := map[string]map[string]any{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		path, _ := m["path"].(string)
		rec[path] = m
	}
	if r := rec["/take"]; r["path"] != "/take" || r["status"] != 200.0 || r["frames"] != 42.0 || r["real_time_factor"] != 0.5 || r["batch"] != 3.0 || r["first_audio_ms"] != 41.5 || r["finish"] != "stop" || r["bytes"] != 5.0 {
		t.Errorf("take: %v", r)
	}
	if _, ok := rec["/take"]["duration_ms"].(float64); !ok {
		t.Errorf("take without duration: %v", rec["/take"])
	}
	if r := rec["/refused"]; r["status"] != 403.0 || r["frames"] != nil {
		t.Errorf("refused: %v", r)
	}
	if r := rec["/missing"]; r["status"] != 404.0 {
		t.Errorf("missing: %v", r)
	}
	if _, err := NewRequestLogger(&buf, "xml"); err == nil {
		t.Error("log format xml accepted")
	}
}

// A take cut by the client's disconnect is logged as 499 with
// client_closed, not as the 200 its headers had sent (issue 32).
func TestAccessLogClientClosed(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewRequestLogger(&buf, "json")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := httptest.NewServer(AccessLog(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first audio"))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done() // the take runs until the client leaves
	}), log))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/audio/speech", nil)
	go func() {
		<-started
		cancel()
	}()
	if res, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	srv.Close()
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &m); err != nil {
		t.Fatalf("%v: %q", err, buf.String())
	}
	if m["status"] != 499.0 || m["client_closed"] != true || m["status_sent"] != 200.0 {
		t.Errorf("logged %v", m)
	}
}
