package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
)

// A connection a client opened and never sent a request on (a browser's
// preconnect, a Go transport's spare dial) is closed by the shutdown, which
// then succeeds: net/http alone counts it busy for five seconds, past
// Serve's shutdown timeout, and Serve failed with "context deadline
// exceeded". With and without the connection cap (whose listener wraps
// each connection).
func TestServeShutdownClosesUnusedConns(t *testing.T) {
	for _, maxConns := range []int{0, 4} {
		mux := http.NewServeMux()
		mux.HandleFunc("/quick", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "quick") })
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lim := DefaultServeLimits()
		lim.MaxConns = maxConns
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, ln, mux, lim) }()

		unused, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer unused.Close()
		// A request on a second connection: the server accepts in order,
		// so by its answer the unused connection is accepted too.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := client.Get("http://" + ln.Addr().String() + "/quick")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()

		cancel()
		if err := <-done; err != nil {
			t.Fatalf("MaxConns %d: Serve: %v", maxConns, err)
		}
		if n, err := unused.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("MaxConns %d: the unused connection read %d bytes, %v; want it closed (EOF)", maxConns, n, err)
		}
	}
}
