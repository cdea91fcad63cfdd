package app

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"proscenium/app/internal/enginetest"
	"proscenium/app/studio"
	"proscenium/app/takes"
)

// The studio's own speech server: its takes join the takes list as API
// takes (stored, same audio as the reply), every request is logged, and
// Stop closes the port.
func TestStudioServerRecordsAPITakes(t *testing.T) {
	svc := newTakesService(t, t.TempDir(), 5)
	rec := &recorder{}
	svc.events.Subscribe(rec.add)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	st := svc.Settings()
	st.ServerPort = port
	if _, err := svc.SetSettings(st); err != nil {
		t.Fatal(err)
	}
	srv, err := svc.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	if !srv.Running || !srv.Control || !strings.HasSuffix(srv.Address, ":"+strconv.Itoa(port)) {
		t.Fatalf("after StartServer: %+v", srv)
	}
	resp, err := http.Post(srv.Address+"/v1/audio/speech", "application/json",
		strings.NewReader(`{"model":"drama-3","input":"Hello there.","response_format":"pcm","seed":3}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("speech: %d %s", resp.StatusCode, body)
	}
	list := svc.Takes()
	if len(list) != 1 || list[0].Source != takes.SourceAPI || list[0].State != takes.TakeFinished || !list[0].Stored ||
		list[0].Request.Text != "Hello there." || list[0].Request.Seed != 3 {
		t.Fatalf("takes after an API request: %+v", list)
	}
	pcm, _, err := svc.takes.TakePCM(list[0].ID)
	if err != nil || len(pcm) != 5*enginetest.SamplesPerFrame || len(body) != 2*len(pcm) {
		t.Fatalf("API take PCM: %d samples (%v), reply %d bytes", len(pcm), err, len(body))
	}
	for i, v := range pcm {
		if v != enginetest.Signal(i) {
			t.Fatalf("API take sample %d = %v, want %v", i, v, enginetest.Signal(i))
		}
	}
	n := 0
	for _, name := range rec.names() {
		if name == studio.EventTake {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("%d take events for the API take, want running and finished", n)
	}
	// The record is written once the handler returns, after the reply.
	waitFor(t, func() bool { return len(svc.ServerStatus().Log) > 0 })
	log := svc.ServerStatus().Log
	if len(log) != 1 || log[0].Path != "/v1/audio/speech" || log[0].Status != 200 || log[0].Bytes != int64(len(body)) {
		t.Fatalf("request log: %+v", log)
	}
	// A streamed take passes through the log's writer chunk by chunk.
	resp, err = http.Post(srv.Address+"/v1/audio/speech", "application/json",
		strings.NewReader(`{"model":"drama-3","input":"Hello there.","response_format":"pcm","stream":true,"seed":3}`))
	if err != nil {
		t.Fatal(err)
	}
	streamed, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(streamed) != string(body) {
		t.Fatalf("streamed reply: %d, %d bytes (whole: %d)", resp.StatusCode, len(streamed), len(body))
	}
	waitFor(t, func() bool { return len(svc.ServerStatus().Log) == 2 })
	if l := svc.ServerStatus().Log[0]; !l.Streamed || l.Bytes != int64(len(streamed)) {
		t.Fatalf("streamed request logged as %+v", l)
	}
	if _, err := svc.StopServer(); err != nil {
		t.Fatal(err)
	}
	if st := svc.ServerStatus(); st.Running || st.Address != "" {
		t.Fatalf("after StopServer: %+v", st)
	}
	if _, err := http.Get(srv.Address + "/healthz"); err == nil {
		t.Fatal("the server still answers after StopServer")
	}
}

func TestAttachedServerCannotBeStoppedFromTheStudio(t *testing.T) {
	svc, _ := newService(t, nil)
	AttachServer(svc, "http://127.0.0.1:9")
	if st := svc.ServerStatus(); !st.Running || st.Control || st.Address != "http://127.0.0.1:9" {
		t.Fatalf("attached: %+v", st)
	}
	if _, err := svc.StopServer(); !errors.Is(err, studio.ErrBusy) {
		t.Fatalf("StopServer of the serving process: %v", err)
	}
	if _, err := svc.StartServer(); !errors.Is(err, studio.ErrBusy) {
		t.Fatalf("StartServer under serve: %v", err)
	}
}
