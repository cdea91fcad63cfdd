package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// At the cap, a new connection takes the slot of an idle one, never of
// one busy with a request: the busy request completes, the idle
// connection is closed, the new request is answered.
func TestConnSlotsEvictIdleNotBusy(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, "slow done")
	})
	mux.HandleFunc("/quick", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "quick") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := DefaultServeLimits()
	lim.MaxConns = 2
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, mux, lim) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()

	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	fmt.Fprintf(busy, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /quick HTTP/1.1\r\nHost: x\r\n\r\n")
	idleReader := bufio.NewReader(idle)
	if res, err := http.ReadResponse(idleReader, nil); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + "/quick")
	if err != nil {
		t.Fatalf("a third connection at a cap of two: %v", err)
	}
	res.Body.Close()
	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idleReader.ReadByte(); err == nil {
		t.Error("the idle connection was not closed")
	}
	close(release)
	busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err = http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatalf("the busy request: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(body), "slow done") {
		t.Errorf("the busy request got %q", body)
	}
}
