package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SpeechModelID is the model id the speech API serves (what clients put
// in "model").
const SpeechModelID = "drama-3"

// EventServer carries ServerStatus when the speech server starts, stops
// or answers a request.
const EventServer = "server"

// requestLogSize is how many requests the panel keeps (newest).
const requestLogSize = 50

// ServerStatus is the studio's speech server panel.
type ServerStatus struct {
	Running bool   `json:"running"`
	Address string `json:"address"` // http://host:port when running
	// Control says whether the studio starts and stops the server (the
	// desktop window); false when the server serves this page (serve --ui).
	Control bool            `json:"control"`
	Port    int             `json:"port"`  // where Start listens (settings' server_port)
	Model   string          `json:"model"` // the model id clients name in requests
	Error   string          `json:"error"` // why it stopped, if it failed
	Log     []RequestRecord `json:"log"`   // newest first
}

// RequestRecord is one request to the speech API.
type RequestRecord struct {
	At       int64   `json:"at_ms"` // Unix milliseconds
	Method   string  `json:"method"`
	Path     string  `json:"path"`
	Status   int     `json:"status"`
	Bytes    int64   `json:"bytes"` // of the reply
	Millis   float64 `json:"ms"`    // until the reply ended
	Client   string  `json:"client"`
	Streamed bool    `json:"streamed"`
}

// serverPanel is the speech server's state (its own lock: requests log
// while the service is busy).
type serverPanel struct {
	mu       sync.Mutex
	external string // the address of the server this process was started as (serve)
	address  string // the studio's own server, while it runs
	stop     context.CancelFunc
	done     chan struct{}
	err      string
	log      []RequestRecord // oldest first
}

// AttachServer tells the service that this process is the speech server
// at address (proscenium serve): the panel shows it and its requests, and
// the studio cannot stop it. A function, not a method, so that the UI
// bindings do not expose it.
func AttachServer(s *Service, address string) {
	s.server.mu.Lock()
	s.server.external = address
	s.server.mu.Unlock()
}

// LogRequests wraps the server's routes so that every speech API request
// (/v1/, /healthz) is logged for the panel.
func LogRequests(s *Service, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/healthz" {
			h.ServeHTTP(w, r)
			return
		}
		rw := &recordingWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		h.ServeHTTP(rw, r)
		rec := RequestRecord{At: start.UnixMilli(), Method: r.Method, Path: r.URL.Path, Status: rw.status, Bytes: rw.bytes,
			Millis: float64(time.Since(start).Microseconds()) / 1000, Client: hostOnly(r.RemoteAddr), Streamed: rw.flushed}
		s.server.mu.Lock()
		s.server.log = append(s.server.log, rec)
		if len(s.server.log) > requestLogSize {
			s.server.log = s.server.log[len(s.server.log)-requestLogSize:]
		}
		s.server.mu.Unlock()
		s.publish(EventServer, s.ServerStatus())
	})
}

// recordingWriter notes the status and size of a reply; it flushes
// through (streamed takes).
type recordingWriter struct {
	http.ResponseWriter
	status  int
	bytes   int64
	wrote   bool
	flushed bool
}

func (w *recordingWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.wrote = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *recordingWriter) Flush() {
	w.flushed = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServerStatus reports the speech server panel.
func (s *Service) ServerStatus() ServerStatus {
	port := s.Settings().ServerPort
	p := &s.server
	p.mu.Lock()
	defer p.mu.Unlock()
	st := ServerStatus{Control: p.external == "", Port: port, Model: SpeechModelID, Error: p.err, Log: make([]RequestRecord, 0, len(p.log))}
	switch {
	case p.external != "":
		st.Running, st.Address = true, p.external
	case p.address != "":
		st.Running, st.Address = true, p.address
	}
	for i := len(p.log) - 1; i >= 0; i-- {
		st.Log = append(st.Log, p.log[i])
	}
	return st
}

// StartServer starts the speech API (POST /v1/audio/speech, GET
// /v1/models, GET /healthz) on 127.0.0.1 at the settings' server port,
// sharing the studio's model; its takes appear in the takes list. Only the
// desktop window starts one: under `proscenium serve` the server is already
// this process.
func (s *Service) StartServer() (ServerStatus, error) {
	port := s.Settings().ServerPort
	p := &s.server
	p.mu.Lock()
	if p.external != "" {
		p.mu.Unlock()
		return s.ServerStatus(), fmt.Errorf("%w: this page is served by the speech server at %s; it stops where it was started", ErrBusy, p.external)
	}
	if p.address != "" {
		p.mu.Unlock()
		return s.ServerStatus(), nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		p.mu.Unlock()
		return s.ServerStatus(), fmt.Errorf("starting the speech server on port %d: %w (another program uses it? change the server port)", port, err)
	}
	mux := http.NewServeMux()
	SpeechAPI(s, SpeechModelID).Register(mux)
	h := Protect(LogRequests(s, mux), HTTPPolicy{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.address, p.stop, p.done, p.err = "http://"+ln.Addr().String(), stop, done, ""
	p.mu.Unlock()
	go func() {
		defer close(done)
		err := Serve(ctx, ln, h, DefaultServeLimits())
		p.mu.Lock()
		p.address, p.stop = "", nil
		if err != nil && ctx.Err() == nil {
			p.err = err.Error()
		}
		p.mu.Unlock()
		s.publish(EventServer, s.ServerStatus())
	}()
	st := s.ServerStatus()
	s.publish(EventServer, st)
	return st, nil
}

// StopServer stops the studio's speech server (requests in flight are
// ended) and waits until it has stopped.
func (s *Service) StopServer() (ServerStatus, error) {
	p := &s.server
	p.mu.Lock()
	if p.external != "" {
		p.mu.Unlock()
		return s.ServerStatus(), fmt.Errorf("%w: this page is served by the speech server at %s; stop it where it was started (Ctrl-C)", ErrBusy, p.external)
	}
	stop, done := p.stop, p.done
	p.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	return s.ServerStatus(), nil
}
