package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"proscenium/app"
	"proscenium/engine"
	"proscenium/frontend"
)

func init() {
	register(command{name: "serve", summary: "serve the studio UI to a browser (--ui) on 127.0.0.1", run: runServe})
}

func runServe(args []string) error {
	fs := newFlags("serve")
	ui := fs.Bool("ui", false, "serve the studio UI and its API (/api/) to a browser")
	addr := fs.String("addr", "127.0.0.1:7860", "address to listen on (port 0 picks a free port)")
	settings := fs.String("settings", app.DefaultSettingsPath(), "settings file (\"\": keep settings in memory only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if !*ui {
		return fmt.Errorf("%w: nothing to serve without --ui yet (the speech API comes with the engine)", errUsage)
	}

	hub := app.NewHub()
	svc, err := app.New(app.Config{SettingsPath: *settings, Events: hub, Open: openModel})
	if err != nil {
		return err
	}
	defer app.Shutdown(svc)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	tcp, _ := ln.Addr().(*net.TCPAddr)
	mux, err := app.NewMux(svc, hub, app.ServerOptions{UI: frontend.Dist(), LoopbackOnly: tcp != nil && tcp.IP.IsLoopback()})
	if err != nil {
		ln.Close()
		return err
	}
	// Tests read this line to find the port.
	fmt.Printf("proscenium serve: studio UI at http://%s/\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Serve(ctx, ln, mux)
}

// openModel opens a checkpoint directory for the app service: the engine's
// open-by-directory (the CPU backend).
var openModel app.Opener = func(dir string) (engine.Engine, error) {
	return engine.Open(dir, engine.Options{})
}
