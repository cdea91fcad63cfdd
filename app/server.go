package app

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// ServerOptions configure NewMux.
type ServerOptions struct {
	// UI is the built front end (frontend.Dist()); with it the mux serves
	// the UI at / and its API under /api/. Nil: no UI routes.
	UI fs.FS
	// LoopbackOnly refuses API requests whose Host is not a loopback name
	// (defeats DNS rebinding against a server bound to 127.0.0.1).
	LoopbackOnly bool
}

// NewMux returns the routes of `proscenium serve`. Other endpoints (the
// speech API) are added by the caller on the returned mux, e.g.
// mux.Handle("POST /v1/audio/speech", h).
//
// UI routes:
//
//	GET  /               the built front end
//	POST /api/{method}   a Service method: JSON array of arguments in, JSON value out
//	GET  /api/events     WebSocket: every Event as JSON {name, data}; PCM
//	                     chunks (EventPCM) as binary messages (PCMChunk)
//	GET  /api/takes/{id}/pcm  a take's audio: float32 little-endian, mono
func NewMux(svc *Service, hub *Hub, opt ServerOptions) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	if opt.UI == nil {
		return mux, nil
	}
	methods, err := apiMethods(svc)
	if err != nil {
		return nil, err
	}

	guard := func(h http.Handler) http.Handler { return sameOriginOnly(opt.LoopbackOnly, h) }
	mux.Handle("POST /api/{method}", guard(requireJSON(localOnly(opt.LoopbackOnly, apiHandler(methods)))))
	mux.Handle("GET /api/events", guard(eventsHandler(hub)))
	mux.Handle("GET /api/takes/{id}/pcm", guard(takePCMHandler(svc)))
	files := http.FileServerFS(opt.UI)
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	return mux, nil
}

// sameOriginOnly refuses cross-site requests: a page on another origin may
// not drive the studio. Browsers send Origin on POST and WebSocket requests;
// it must name this server.
func sameOriginOnly(loopbackOnly bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopbackOnly && !isLoopbackHost(r.Host) {
			writeJSON(w, http.StatusForbidden, apiError{"Host " + r.Host + " is not this machine's loopback address"})
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			writeJSON(w, http.StatusForbidden, apiError{"cross-origin request from " + o + " refused"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

func isLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// localOnlyMethods write files wherever the caller names: only someone at
// this machine (a server on a loopback address) may call them.
var localOnlyMethods = map[string]bool{"ExportTake": true}

func localOnly(loopbackOnly bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackOnly && localOnlyMethods[r.PathValue("method")] {
			writeJSON(w, http.StatusForbidden, apiError{r.PathValue("method") +
				" writes files on the server: it is answered only when the server listens on a loopback address"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// requireJSON refuses bodies that are not declared JSON: a cross-site form
// or text/plain POST (which needs no CORS preflight) never reaches a method.
func requireJSON(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if mt, _, _ := strings.Cut(ct, ";"); strings.TrimSpace(strings.ToLower(mt)) != "application/json" {
			writeJSON(w, http.StatusUnsupportedMediaType, apiError{"Content-Type must be application/json, got " + ct})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// takePCMHandler serves a take's PCM for the browser to play (replay, A/B).
func takePCMHandler(svc *Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || id <= 0 {
			writeJSON(w, http.StatusBadRequest, apiError{"take id must be a positive number"})
			return
		}
		pcm, t, err := svc.takePCM(id)
		if err != nil {
			writeJSON(w, statusOf(err), apiError{err.Error()})
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Sample-Rate", strconv.Itoa(t.SampleRate))
		w.Header().Set("Content-Length", strconv.Itoa(4*len(pcm)))
		w.Write(encodeFloat32LE(pcm))
	})
}

// eventsBuffer is how many events a WebSocket client may lag behind before
// it is disconnected (it reconnects and reads the state afresh).
const eventsBuffer = 256

func eventsHandler(hub *Hub) http.Handler {
	upgrader := websocket.Upgrader{} // default CheckOrigin: same origin only
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has answered
		}
		defer conn.Close()
		events := make(chan Event, eventsBuffer)
		lagged := make(chan struct{})
		unsubscribe := hub.Subscribe(func(e Event) {
			select {
			case events <- e:
			default:
				select {
				case <-lagged:
				default:
					close(lagged)
				}
			}
		})
		defer unsubscribe()

		closed := make(chan struct{})
		go func() { // reads only to notice the client going away
			defer close(closed)
			for {
				if _, _, err := conn.NextReader(); err != nil {
					return
				}
			}
		}()
		for {
			select {
			case e := <-events:
				conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
				var err error
				if b, ok := e.Data.(BinaryEvent); ok {
					err = conn.WriteMessage(websocket.BinaryMessage, b.BinaryMessage())
				} else {
					err = conn.WriteJSON(e)
				}
				if err != nil {
					return
				}
			case <-lagged:
				conn.WriteControl(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "too far behind"), time.Now().Add(time.Second))
				return
			case <-closed:
				return
			case <-r.Context().Done():
				return
			}
		}
	})
}

// Serve answers HTTP on ln until ctx ends, then shuts down gracefully
// (open WebSockets are closed).
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	// Request contexts derive from base, so ending it ends the WebSocket
	// handlers too (Shutdown does not touch hijacked connections).
	base, stopRequests := context.WithCancel(context.Background())
	defer stopRequests()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stopRequests()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}
