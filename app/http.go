package app

import (
	"net/http"

	"proscenium/app/server"
	"proscenium/app/studio"
)

// NewMux returns the routes of `proscenium serve` for s (server.NewMux:
// the UI, /api/<Method> for every method of s, its events and its takes'
// audio).
func NewMux(s *Service, hub *studio.Hub, opt server.Options) (*http.ServeMux, error) {
	return server.NewMux(s, s.takes, hub, opt)
}

// LogRequests wraps the server's routes so that every speech API request
// is logged for the studio's server panel. A function, not a method, so
// that the UI bindings do not expose it.
func LogRequests(s *Service, h http.Handler) http.Handler { return s.server.LogRequests(h) }

// AttachServer tells the service that this process is the speech server
// at address (proscenium serve): the panel shows it and its requests, and
// the studio cannot stop it. A function, not a method, so that the UI
// bindings do not expose it.
func AttachServer(s *Service, address string) { s.server.Attach(address) }
