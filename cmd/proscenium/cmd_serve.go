package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"proscenium/app"
	"proscenium/app/model"
	"proscenium/app/projects"
	"proscenium/app/server"
	"proscenium/app/settings"
	"proscenium/app/speechapi"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/app/voicelib"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/open"
	"proscenium/frontend"
)

func init() {
	register(command{name: "serve", summary: "serve the OpenAI-compatible speech API (--model) and the studio UI (--ui) on 127.0.0.1", run: runServe})
}

// servedModelID is the "model" value clients send to /v1/audio/speech.
const servedModelID = server.SpeechModelID

func runServe(args []string) error {
	fs := newFlags("serve")
	ui := fs.Bool("ui", false, "serve the studio UI and its API (/api/) to a browser")
	modelArg := fs.String("model", os.Getenv(modelEnv), "checkpoint directory or Hugging Face repository id to load at start (the speech API answers 503 until a model is loaded; default: $"+modelEnv+")")
	host := fs.String("host", envOr(hostEnv, "127.0.0.1"), "address to listen on (loopback by default; anything else exposes the server to the network; default: $"+hostEnv+")")
	port := fs.Int("port", settings.DefaultServerPort, "port to listen on (0 picks a free port; default: $"+portEnv+", else the settings' server_port)")
	settingsPath := fs.String("settings", settings.DefaultPath(), "settings file (\"\": keep settings in memory only)")
	backend := fs.String("backend", open.Auto, "backend: auto (CUDA when a usable GPU is found, else CPU), cpu or cuda")
	isolate := fs.Bool("isolate", false, "run the engine in a child process (default: the settings' isolate_engine)")
	memCap := memoryCapFlag(fs)
	voiceCache := voiceCacheFlag(fs)
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	var allowOrigins, allowHosts listFlag
	fs.Var(&allowOrigins, "allow-origin", "an origin (scheme://host[:port]) whose web pages may call the server, besides its own (repeatable; \"*\": any)")
	fs.Var(&allowHosts, "allow-host", "a host name the server answers to, besides loopback names and the --host address (repeatable; \"*\": any)")
	logFormat := fs.String("log-format", "text", "request log on stderr, one line per request: text (key=value) or json")
	batch := fs.Int("batch", 0, "takes the engine runs together, concurrent requests sharing its steps (1 to 8; 0: the settings' batch, default 4)")
	maxTake := fs.Float64("max-take-seconds", speechapi.DefaultMaxTakeSeconds, "the longest take the speech API makes, in seconds of audio (a larger max_frames is a 400 naming this limit)")
	apiKey := fs.String("api-key", "", "require this key as \"Authorization: Bearer KEY\" on /api/ and /v1/ (default: $"+apiKeyEnv+")")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if err := open.CheckBackend(*backend); err != nil {
		return fmt.Errorf("%w: --backend: %v", errUsage, err)
	}
	portGiven := false
	fs.Visit(func(f *flag.Flag) { portGiven = portGiven || f.Name == "port" })
	if env := os.Getenv(portEnv); env != "" && !portGiven {
		p, err := strconv.Atoi(env)
		if err != nil {
			return fmt.Errorf("%w: $%s=%q is not a port number", errUsage, portEnv, env)
		}
		*port, portGiven = p, true
	}
	reqLog, err := server.NewRequestLogger(os.Stderr, *logFormat)
	if err != nil {
		return fmt.Errorf("%w: --log-format: %v", errUsage, err)
	}
	if !(*maxTake >= 1 && *maxTake <= 3000) {
		return fmt.Errorf("%w: --max-take-seconds must be in [1, 3000] (the engine's limit is 65536 frames, about 50 minutes), got %v", errUsage, *maxTake)
	}
	if !*ui && *modelArg == "" {
		return fmt.Errorf("%w: nothing to serve: give --model DIR (speech API) and/or --ui (studio UI)", errUsage)
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("%w: --port %d is not a TCP port", errUsage, *port)
	}
	if *apiKey == "" {
		*apiKey = os.Getenv(apiKeyEnv)
	}
	if *apiKey != "" {
		if err := server.ValidateAPIKey(*apiKey); err != nil {
			return fmt.Errorf("%w: --api-key: %v", errUsage, err)
		}
	}
	for _, o := range allowOrigins {
		if u, err := url.Parse(o); o != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/") {
			return fmt.Errorf("%w: --allow-origin %q is not an origin like https://example.org or http://host:8080", errUsage, o)
		}
	}

	hub := studio.NewHub()
	// Browser mode: takes and the demo model live under the XDG data
	// directory as in the window; the browser plays the audio (no Audio).
	var svc *app.Service // the opener reads the settings at load time
	var servedBatch int  // --batch, else the settings' (set once the settings are read)
	// A load asks what the settings do, the flags given overriding them
	// (the batch is serve's for its life: the speech API's limits hold it).
	loadOptions := func(st settings.Settings) open.Options {
		opts := model.LoadOptions(st)
		opts.Backend, opts.Isolate, opts.Numerics, opts.Batch = *backend, *isolate || opts.Isolate, numerics, servedBatch
		opts.MemoryCap, opts.VoiceCacheBytes = memCap.or(opts.MemoryCap), voiceCache.or(opts.VoiceCacheBytes)
		return opts
	}
	cfg := app.Config{SettingsPath: *settingsPath, Events: hub, TakesDir: takes.DefaultDir(), DemoDir: model.DefaultDemoDir(),
		VoicesDir: voicelib.DefaultDir(), ProjectsDir: projects.DefaultDir(), LoadOptions: loadOptions,
		Open: func(dir string) (api.Engine, error) {
			return open.Open(context.Background(), dir, loadOptions(svc.Settings()))
		}}
	if *ui {
		cfg.ProbeGPU = model.ProbeGPUWorker // the model panel says whether the GPU backend can start
	}
	svc, err = app.New(cfg)
	if err != nil {
		return err
	}
	defer app.Shutdown(svc)
	for _, w := range svc.Studio().Warnings { // start-up's: without a studio open, nothing else would show them
		fmt.Fprintf(os.Stderr, "proscenium serve: warning: %s\n", w)
	}
	if !portGiven {
		*port = svc.Settings().ServerPort
	}
	if servedBatch = *batch; servedBatch == 0 {
		servedBatch = svc.Settings().Batch
	}
	if servedBatch, err = api.BatchOf(servedBatch); err != nil {
		return fmt.Errorf("%w: --batch: %w", errUsage, err)
	}
	// The model's folder and config are checked before the port is taken
	// (a wrong path fails at once); the weights load once the server
	// answers, so a taken port fails at once too, not after a load of a
	// minute, and /healthz and the speech API say "still loading" meanwhile.
	var modelDir string
	if *modelArg != "" {
		if modelDir, err = resolveModel(*modelArg); err != nil {
			return err
		}
		if _, err := drama3.LoadConfig(modelDir); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return listenError(*host, *port, err)
	}
	tcp, _ := ln.Addr().(*net.TCPAddr)
	loopback := tcp != nil && tcp.IP.IsLoopback()
	opt := server.Options{LoopbackOnly: loopback}
	if *ui {
		opt.UI = frontend.Dist()
	}
	mux, err := app.NewMux(svc, hub, opt)
	if err != nil {
		ln.Close()
		return err
	}
	// API takes are recorded in the studio's takes list (marked as API takes).
	lim := speechapi.DefaultLimits()
	lim.MaxTakeSeconds = *maxTake
	lim.Batch = servedBatch
	app.SpeechAPI(svc, servedModelID, lim).Register(mux)

	policy := server.HTTPPolicy{AllowOrigins: allowOrigins, AllowHosts: allowHosts, APIKey: *apiKey}
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
	// Ctrl-C is caught from here on: a client that read the lines below
	// may stop the server at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Tests read these lines to find the port.
	fmt.Printf("proscenium serve: speech API at http://%s/v1/audio/speech (model %q)\n", ln.Addr(), servedModelID)
	if *ui {
		fmt.Printf("proscenium serve: studio UI at http://%s/\n", ln.Addr())
	}

	app.AttachServer(svc, "http://"+ln.Addr().String())
	// The access log is outermost: requests the policy refuses are logged too.
	served := make(chan error, 1)
	go func() {
		served <- server.Serve(ctx, ln, server.AccessLog(server.Protect(app.LogRequests(svc, mux), policy), reqLog), server.DefaultServeLimits())
	}()
	if modelDir != "" {
		if err := loadServed(ctx, svc, modelDir); err != nil {
			stop()
			<-served
			return err
		}
	}
	return <-served
}

// loadServed loads the model while the server answers, and says on stderr
// when it is ready. A load that fails stops serve (the error is returned).
// Ctrl-C during the load returns at once: the process exits without
// waiting for a load it would only close again.
func loadServed(ctx context.Context, svc *app.Service, dir string) error {
	t0 := time.Now()
	loaded := make(chan error, 1)
	go func() {
		_, err := svc.LoadModel(dir)
		loaded <- err
	}()
	select {
	case err := <-loaded:
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "proscenium serve: model ready after %.1f s: %s\n", time.Since(t0).Seconds(), svc.ModelStatus().Message)
		return nil
	case <-ctx.Done():
		return nil
	}
}

// listenError says why the port could not be taken, with the way out.
func listenError(host string, port int, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("port %d on %s is in use by another program (another proscenium serve, or the studio's speech server?): give --port N, or --port 0 for a free one", port, host)
	}
	return fmt.Errorf("cannot listen on %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
}

// The environment variables that hold serve's defaults (a service unit or a
// container sets them; the API key there stays out of the process list).
// A flag given on the command line wins.
const (
	apiKeyEnv = "PROSCENIUM_API_KEY"
	modelEnv  = "PROSCENIUM_MODEL"
	hostEnv   = "PROSCENIUM_HOST"
	portEnv   = "PROSCENIUM_PORT"
)

// envOr is $name, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
