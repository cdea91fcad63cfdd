package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"proscenium/app"
	"proscenium/app/speechapi"
	"proscenium/engine"
	"proscenium/frontend"
)

func init() {
	register(command{name: "serve", summary: "serve the OpenAI-compatible speech API (--model) and the studio UI (--ui) on 127.0.0.1", run: runServe})
}

// servedModelID is the "model" value clients send to /v1/audio/speech.
const servedModelID = "drama-3"

func runServe(args []string) error {
	fs := newFlags("serve")
	ui := fs.Bool("ui", false, "serve the studio UI and its API (/api/) to a browser")
	model := fs.String("model", "", "checkpoint directory to load at start (the speech API answers 503 until a model is loaded)")
	host := fs.String("host", "127.0.0.1", "address to listen on (loopback by default; anything else exposes the server to the network)")
	port := fs.Int("port", app.DefaultServerPort, "port to listen on (0 picks a free port; default: the settings' server_port)")
	settings := fs.String("settings", app.DefaultSettingsPath(), "settings file (\"\": keep settings in memory only)")
	isolate := fs.Bool("isolate", false, "run the engine in a child process (default: the settings' isolate_engine)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if !*ui && *model == "" {
		return fmt.Errorf("%w: nothing to serve: give --model DIR (speech API) and/or --ui (studio UI)", errUsage)
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("%w: --port %d is not a TCP port", errUsage, *port)
	}

	hub := app.NewHub()
	// Browser mode: takes and the demo model live under the XDG data
	// directory as in the window; the browser plays the audio (no Audio).
	var svc *app.Service // the opener reads the settings at load time
	cfg := app.Config{SettingsPath: *settings, Events: hub, TakesDir: app.DefaultTakesDir(), DemoDir: app.DefaultDemoDir(),
		Open: func(dir string) (engine.Engine, error) {
			return openEngine(dir, *isolate || svc.Settings().IsolateEngine)
		}}
	if *ui {
		cfg.ProbeGPU = app.ProbeGPUWorker // the model panel says whether the GPU backend can start
	}
	svc, err := app.New(cfg)
	if err != nil {
		return err
	}
	defer app.Shutdown(svc)
	portGiven := false
	fs.Visit(func(f *flag.Flag) { portGiven = portGiven || f.Name == "port" })
	if !portGiven {
		*port = svc.Settings().ServerPort
	}
	if *model != "" {
		if _, err := svc.LoadModel(*model); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	tcp, _ := ln.Addr().(*net.TCPAddr)
	loopback := tcp != nil && tcp.IP.IsLoopback()
	opt := app.ServerOptions{LoopbackOnly: loopback}
	if *ui {
		opt.UI = frontend.Dist()
	}
	mux, err := app.NewMux(svc, hub, opt)
	if err != nil {
		ln.Close()
		return err
	}
	speechapi.New(func() (engine.Engine, error) { return app.LoadedEngine(svc) },
		servedModelID, speechapi.DefaultLimits()).Register(mux)

	if !loopback {
		fmt.Fprintf(os.Stderr, "proscenium serve: warning: listening on %s, reachable from other machines; the server has no authentication\n", ln.Addr())
	}
	// Tests read these lines to find the port.
	fmt.Printf("proscenium serve: speech API at http://%s/v1/audio/speech (model %q)\n", ln.Addr(), servedModelID)
	if *ui {
		fmt.Printf("proscenium serve: studio UI at http://%s/\n", ln.Addr())
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Serve(ctx, ln, mux)
}
