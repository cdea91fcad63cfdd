package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"proscenium/app/studio"
)

// SpeechModelID is the model id the speech API serves (what clients put
// in "model").
const SpeechModelID = "drama-3"

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
	Bytes    int64   `json:"bytes"`       // of the reply
	Millis   float64 `json:"duration_ms"` // until the reply ended
	Client   string  `json:"client"`
	Streamed bool    `json:"streamed"`
	// Batch is, for a take, the most takes it ran beside, itself included
	// (the X-Batch header or trailer); 0 for other requests.
	Batch int `json:"batch,omitempty"`
}

// Panel is the studio's speech server panel: the server it starts and
// stops, or the one this process is (serve), and the requests it answered.
// It has its own lock: requests are logged while the studio is busy.
type Panel struct {
	events *studio.Hub
	port   func() int // the settings' server port

	mu       sync.Mutex
	external string // the address of the server this process was started as (serve)
	address  string // the studio's own server, while it runs
	stop     context.CancelFunc
	done     chan struct{}
	err      string
	log      []RequestRecord // oldest first
}

// NewPanel makes the panel; port returns the port Start listens on (the
// settings' server port); events receives EventServer.
func NewPanel(events *studio.Hub, port func() int) *Panel {
	return &Panel{events: events, port: port}
}

// Attach tells the panel that this process is the speech server at address
// (proscenium serve): the panel shows it and its requests, and the studio
// cannot stop it.
func (p *Panel) Attach(address string) {
	p.mu.Lock()
	p.external = address
	p.mu.Unlock()
}

// LogRequests wraps the server's routes so that every speech API request
// (/v1/, /healthz) is logged for the panel.
func (p *Panel) LogRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/healthz" {
			h.ServeHTTP(w, r)
			return
		}
		rw := &recordingWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		h.ServeHTTP(rw, r)
		status, _ := loggedStatus(r, rw)
		rec := RequestRecord{At: start.UnixMilli(), Method: r.Method, Path: r.URL.Path, Status: status, Bytes: rw.bytes,
			Millis: float64(time.Since(start).Microseconds()) / 1000, Client: hostOnly(r.RemoteAddr), Streamed: rw.flushed}
		rec.Batch, _ = strconv.Atoi(w.Header().Get("X-Batch"))
		p.mu.Lock()
		p.log = append(p.log, rec)
		if len(p.log) > requestLogSize {
			p.log = p.log[len(p.log)-requestLogSize:]
		}
		p.mu.Unlock()
		p.events.Send(studio.EventServer, p.Status())
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

// Status reports the speech server panel.
func (p *Panel) Status() ServerStatus {
	port := p.port()
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

// Start serves routes (the speech API: app registers it) on 127.0.0.1 at
// the settings' server port, behind Protect's default policy and with the
// requests logged for the panel. Only the desktop window starts one: under
// `proscenium serve` the server is already this process.
func (p *Panel) Start(routes *http.ServeMux) (ServerStatus, error) {
	port := p.port()
	p.mu.Lock()
	if p.external != "" {
		p.mu.Unlock()
		return p.Status(), fmt.Errorf("%w: this page is served by the speech server at %s; it stops where it was started", studio.ErrBusy, p.external)
	}
	if p.address != "" {
		p.mu.Unlock()
		return p.Status(), nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		p.mu.Unlock()
		return p.Status(), fmt.Errorf("starting the speech server on port %d: %w (another program uses it? change the server port)", port, err)
	}
	h := Protect(p.LogRequests(routes), HTTPPolicy{})
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
		p.events.Send(studio.EventServer, p.Status())
	}()
	st := p.Status()
	p.events.Send(studio.EventServer, st)
	return st, nil
}

// Stop stops the studio's speech server (requests in flight are ended)
// and waits until it has stopped.
func (p *Panel) Stop() (ServerStatus, error) {
	p.mu.Lock()
	if p.external != "" {
		p.mu.Unlock()
		return p.Status(), fmt.Errorf("%w: this page is served by the speech server at %s; stop it where it was started (Ctrl-C)", studio.ErrBusy, p.external)
	}
	stop, done := p.stop, p.done
	p.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	return p.Status(), nil
}
