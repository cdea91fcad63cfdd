package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
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
	var allowOrigins, allowHosts listFlag
	fs.Var(&allowOrigins, "allow-origin", "an origin (scheme://host[:port]) whose web pages may call the server, besides its own (repeatable; \"*\": any)")
	fs.Var(&allowHosts, "allow-host", "a host name the server answers to, besides loopback names and the --host address (repeatable; \"*\": any)")
	apiKey := fs.String("api-key", "", "require this key as \"Authorization: Bearer KEY\" on /api/ and /v1/ (default: $"+apiKeyEnv+")")
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
	if *apiKey == "" {
		*apiKey = os.Getenv(apiKeyEnv)
	}
	if *apiKey != "" {
		if err := app.ValidateAPIKey(*apiKey); err != nil {
			return fmt.Errorf("%w: --api-key: %v", errUsage, err)
		}
	}
	for _, o := range allowOrigins {
		if u, err := url.Parse(o); o != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/") {
			return fmt.Errorf("%w: --allow-origin %q is not an origin like https://example.org or http://host:8080", errUsage, o)
		}
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
		servedModelID, speechapi.DefaultLimits()).WithVoices(svc.Voices).
		WithTokenCounter(func(text string) (int, error) { c, err := svc.CountTokens(text); return c.Tokens, err }).
		Register(mux)

	policy := app.HTTPPolicy{AllowOrigins: allowOrigins, AllowHosts: allowHosts, APIKey: *apiKey}
	if tcp != nil && !tcp.IP.IsUnspecified() {
		policy.AllowHosts = append(policy.AllowHosts, tcp.IP.String()) // the address it was asked to listen on
	}
	if !loopback {
		auth := "requests need the API key"
		if *apiKey == "" {
			auth = "the server has no authentication (see --api-key)"
		}
		fmt.Fprintf(os.Stderr, "proscenium serve: warning: listening on %s, reachable from other machines; %s\n", ln.Addr(), auth)
		if tcp != nil && tcp.IP.IsUnspecified() && len(allowHosts) == 0 {
			fmt.Fprintf(os.Stderr, "proscenium serve: requests are answered only when they name a loopback host; give --allow-host NAME for each name clients use (e.g. this machine's address)\n")
		}
	}
	// Tests read these lines to find the port.
	fmt.Printf("proscenium serve: speech API at http://%s/v1/audio/speech (model %q)\n", ln.Addr(), servedModelID)
	if *ui {
		fmt.Printf("proscenium serve: studio UI at http://%s/\n", ln.Addr())
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Serve(ctx, ln, app.Protect(mux, policy), app.DefaultServeLimits())
}

// apiKeyEnv names the environment variable that holds --api-key's default
// (keeps the key out of the process list).
const apiKeyEnv = "PROSCENIUM_API_KEY"

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
