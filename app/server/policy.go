package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"proscenium/app/studio"
)

// This file is who may talk to `proscenium serve`, one policy for every
// route (the studio UI and its /api/, the speech API under /v1/, /healthz):
//
//   - Host must be a loopback name (localhost, 127.0.0.0/8, ::1) or one the
//     user allowed: a page on evil.example that rebinds its DNS name to
//     127.0.0.1 is refused.
//   - Origin, when a browser sends one, must be this server's own or one the
//     user allowed: another site's page cannot drive the studio or the
//     speech API, even with requests that need no CORS preflight.
//   - POST bodies must be declared application/json (a cross-site form or
//     text/plain POST never reaches a handler) and be valid UTF-8 (the JSON
//     decoder would silently turn invalid bytes into U+FFFD).
//   - With an API key, /api/ and /v1/ need "Authorization: Bearer KEY".
//   - Every response forbids framing (clickjacking) and restricts what the
//     UI's pages may load to this server.
//
// Serve adds the transport limits: header, body and idle timeouts, and a
// cap on open connections.

// HTTPPolicy configures Protect. The zero value serves this machine only.
type HTTPPolicy struct {
	// AllowOrigins are origins (scheme://host[:port]) besides the server's
	// own whose pages may call the server; "*" allows any.
	AllowOrigins []string
	// AllowHosts are host names or addresses (no port) besides the loopback
	// ones that requests may name in Host; "*" allows any.
	AllowHosts []string
	// APIKey, when not empty, is required as a Bearer token on /api/ and
	// /v1/ (a browser's event socket may send it as the WebSocket
	// subprotocol "bearer.KEY" instead, since it cannot set headers).
	APIKey string
}

// uiCSP limits the studio's pages to this server's own scripts, styles,
// images, audio and connections (the event WebSocket included), and forbids
// framing, plugins, forms and <base>.
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ValidateAPIKey checks a key given on the command line or in the
// environment: printable ASCII without spaces, so it travels as a header
// and as a WebSocket subprotocol token.
func ValidateAPIKey(key string) error {
	if len(key) < 8 {
		return fmt.Errorf("%w: an API key needs at least 8 characters", studio.ErrInvalid)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return fmt.Errorf("%w: an API key may hold letters, digits and -._~!#$%%&'*+^`| only", studio.ErrInvalid)
		}
	}
	return nil
}

// Protect applies p to every request before h sees it.
func Protect(h http.Handler, p HTTPPolicy) http.Handler {
	origins, hosts := map[string]bool{}, map[string]bool{}
	for _, o := range p.AllowOrigins {
		origins[strings.TrimRight(strings.ToLower(o), "/")] = true
	}
	for _, h := range p.AllowHosts {
		hosts[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Content-Security-Policy", uiCSP)
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("Referrer-Policy", "no-referrer")

		host := hostOnly(r.Host)
		if !isLoopbackHost(host) && !hosts["*"] && !hosts[host] {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this machine's loopback address; start the server with --allow-host %s to answer it", r.Host, host))
			return
		}
		origin := r.Header.Get("Origin")
		foreign := origin != "" && !sameOrigin(origin, r.Host)
		if foreign {
			if !origins["*"] && !origins[strings.ToLower(origin)] {
				refuse(w, http.StatusForbidden, fmt.Sprintf("cross-origin request from %s refused; start the server with --allow-origin %s to allow it", origin, origin))
				return
			}
			hdr.Set("Access-Control-Allow-Origin", origin)
			hdr.Set("Access-Control-Expose-Headers", "X-Finish-Reason, X-Time-To-First-Audio-Ms, X-Real-Time-Factor, X-Sample-Rate-Hz, Content-Disposition")
			hdr.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions && foreign { // CORS preflight of an allowed origin
			hdr.Set("Access-Control-Allow-Methods", "GET, POST")
			hdr.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			hdr.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if p.APIKey != "" && isAPIPath(r.URL.Path) && !hasKey(r, p.APIKey) {
			hdr.Set("WWW-Authenticate", `Bearer realm="proscenium"`)
			refuse(w, http.StatusUnauthorized, "this server needs its API key: send Authorization: Bearer KEY")
			return
		}
		if (r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) && !isUpload(r) {
			if !checkJSONBody(w, r) {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// checkJSONBody refuses a body not declared application/json, too large,
// late, or not valid UTF-8; it leaves the body it read for the handler.
func checkJSONBody(w http.ResponseWriter, r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); strings.TrimSpace(strings.ToLower(mt)) != "application/json" {
		refuse(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type must be application/json, got %q", ct))
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, apiBodyLimit(r.URL.Path)))
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit))
		case isTimeout(err):
			refuse(w, http.StatusRequestTimeout, "the body did not arrive in time: "+err.Error())
		default:
			refuse(w, http.StatusBadRequest, "reading the body: "+err.Error())
		}
		return false
	}
	if !utf8.Valid(body) {
		refuse(w, http.StatusBadRequest, "the body is not valid UTF-8")
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// refuse answers a request the policy turned away. The body is JSON with an
// "error" message, which both the studio and OpenAI clients display.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	writeJSON(w, status, apiError{msg})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// uploadPaths take multipart/form-data uploads (a voice's recording), which
// their handler bounds and checks; the Host, Origin and API-key checks above
// apply to them as to every request.
var uploadPaths = map[string]bool{"/v1/audio/voices": true}

func isUpload(r *http.Request) bool {
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return r.Method == http.MethodPost && uploadPaths[r.URL.Path] && strings.TrimSpace(strings.ToLower(mt)) == "multipart/form-data"
}

func isAPIPath(p string) bool { return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/v1/") }

func hasKey(r *http.Request, key string) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(key)) == 1
	}
	for _, p := range websocketProtocols(r) {
		if tok, ok := strings.CutPrefix(p, wsKeyProtocolPrefix); ok && subtle.ConstantTimeCompare([]byte(tok), []byte(key)) == 1 {
			return true
		}
	}
	return false
}

// The browser's event socket offers wsProtocol and, with an API key,
// wsKeyProtocolPrefix+KEY; the server picks wsProtocol.
const (
	wsProtocol          = "proscenium"
	wsKeyProtocolPrefix = "bearer."
)

func websocketProtocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

// hostOnly is the host of a Host header, lower case, without port or brackets.
func hostOnly(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether origin is http(s)://HOST with HOST the request's
// Host (default ports are spelt out by browsers only when not default).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// ServeLimits bound what connections may hold.
type ServeLimits struct {
	ReadHeaderTimeout time.Duration // the request line and headers
	ReadTimeout       time.Duration // the whole request, body included (not the reply: a streamed take may last an hour)
	IdleTimeout       time.Duration // a kept-alive connection between requests
	// MaxConns bounds the open connections: at the cap the one idle the
	// longest is closed for a new one (connslots.go); more wait to be
	// accepted only while every connection is busy with a request.
	MaxConns int
}

// DefaultServeLimits: 10 s for headers, 30 s for a whole request (bodies
// are at most 1 MiB), 2 minutes idle (2 s while three quarters of the
// connections are open), 64 connections.
func DefaultServeLimits() ServeLimits {
	return ServeLimits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxConns: 64}
}

// Serve answers HTTP on ln until ctx ends, then shuts down gracefully
// (open WebSockets are closed, and connections that never sent a request:
// freshConns). h should come from Protect.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, lim ServeLimits) error {
	fresh := newFreshConns()
	connState := fresh.state
	if lim.MaxConns > 0 {
		var slotState func(net.Conn, http.ConnState)
		ln, slotState = limitConns(ln, lim.MaxConns)
		connState = func(c net.Conn, s http.ConnState) { slotState(c, s); fresh.state(c, s) }
	}
	// Request contexts derive from base, so ending it ends the WebSocket
	// handlers too (Shutdown does not touch hijacked connections).
	base, stopRequests := context.WithCancel(context.Background())
	defer stopRequests()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout,
		IdleTimeout: lim.IdleTimeout, ConnState: connState, BaseContext: func(net.Listener) context.Context { return base }}
	srv.RegisterOnShutdown(fresh.closeAll)
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
