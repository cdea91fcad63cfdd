// Command proscenium-studio is the Proscenium desktop window: Wails shows
// the built front end (frontend/dist) and binds the app service to it.
// Build with `make studio` (tags desktop,production) or `make run`.
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"proscenium/app"
	"proscenium/app/model"
	"proscenium/app/projects"
	"proscenium/app/settings"
	"proscenium/app/soundcard"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/app/voicelib"
	"proscenium/engine/api"
	"proscenium/engine/audio/decode"
	"proscenium/engine/gpuworker"
	"proscenium/engine/hfcache"
	"proscenium/engine/open"
	"proscenium/frontend"
)

// backendFlag is --backend: which backend open.Open uses for every model the
// window loads.
var backendFlag = flag.String("backend", open.Auto, "backend: auto (CUDA when a usable GPU is found, else CPU), cpu or cuda")

// loadOptions is what the window's loads ask: the settings'
// (model.LoadOptions: the batch, the voice cache, the memory cap as the GPU
// worker's pool cap, a child process of this binary when isolate_engine is
// on) on the backend --backend names.
func loadOptions(st settings.Settings) open.Options {
	opts := model.LoadOptions(st)
	opts.Backend = *backendFlag
	return opts
}

//go:embed build/appicon.png
var icon []byte

// audioDeadline bounds the wait for the sound card (see soundcard.OpenAudioOutput).
const audioDeadline = 3 * time.Second

func main() {
	// Started by itself to decode an uploaded recording in a child with
	// limits (engine/audio/decode): do that and exit.
	decode.ServeWorkerIfAsked()
	// Started by itself as its engine worker (isolate_engine): serve the CPU
	// engine on stdin and stdout, no window.
	if len(os.Args) > 1 && os.Args[1] == gpuworker.SelfCommand {
		if err := open.ServeWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "proscenium-studio worker:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-studio:", err)
		os.Exit(1)
	}
}

// wailsDialogs are the native dialogs; they need the runtime's context,
// which exists once the window has started.
type wailsDialogs struct {
	mu  sync.Mutex
	ctx context.Context
}

func (d *wailsDialogs) context() (context.Context, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		return nil, fmt.Errorf("the window is not ready for dialogs yet")
	}
	return d.ctx, nil
}

func (d *wailsDialogs) ChooseDirectory(title, defaultDir string) (string, error) {
	ctx, err := d.context()
	if err != nil {
		return "", err
	}
	return runtime.OpenDirectoryDialog(ctx, runtime.OpenDialogOptions{Title: title, DefaultDirectory: defaultDir, CanCreateDirectories: false})
}

func (d *wailsDialogs) ChooseSaveFile(title, defaultDir, defaultName string) (string, error) {
	ctx, err := d.context()
	if err != nil {
		return "", err
	}
	return runtime.SaveFileDialog(ctx, runtime.SaveDialogOptions{Title: title, DefaultDirectory: defaultDir,
		DefaultFilename: defaultName, CanCreateDirectories: true})
}

func run() error {
	modelArg := flag.String("model", "", "checkpoint directory, or a Hugging Face repository id in the local cache (fishaudio/drama-3), to load when the window opens")
	speak := flag.Bool("speak", false, "with --model: speak the saved script once the model has loaded")
	flag.Parse()
	if err := open.CheckBackend(*backendFlag); err != nil {
		return err
	}
	if *speak && *modelArg == "" {
		return fmt.Errorf("--speak needs --model DIR")
	}
	hub := studio.NewHub()
	dialogs := &wailsDialogs{}
	var svc *app.Service // the opener reads the settings at load time
	svc, err := app.New(app.Config{
		SettingsPath: settings.DefaultPath(),
		TakesDir:     takes.DefaultDir(),
		DemoDir:      model.DefaultDemoDir(),
		VoicesDir:    voicelib.DefaultDir(),
		ProjectsDir:  projects.DefaultDir(),
		ExportDir:    takes.DefaultExportDir(),
		Events:       hub,
		LoadOptions:  loadOptions,
		Open: func(dir string) (api.Engine, error) {
			return open.Open(context.Background(), dir, loadOptions(svc.Settings()))
		},
		// Opened in the background: the window never waits for the sound card.
		Speaker:  soundcard.NewPlayer(soundcard.OpenAudioOutput(audioDeadline)),
		Dialogs:  testDialogs(dialogs),
		ProbeGPU: model.ProbeGPUWorker,
	})
	if err != nil {
		return err
	}
	var unsubscribe func()
	opts := &options.App{
		Title:            "Proscenium",
		Width:            1280,
		Height:           800,
		MinWidth:         900, // the studio's narrowest tested layout (900×700: one column)
		MinHeight:        640,
		BackgroundColour: &options.RGBA{R: 24, G: 24, B: 27, A: 255},
		AssetServer:      &assetserver.Options{Assets: frontend.Dist()},
		OnStartup: func(ctx context.Context) {
			dialogs.mu.Lock()
			dialogs.ctx = ctx
			dialogs.mu.Unlock()
			// Service events reach the window as Wails events of the same
			// name, except the PCM itself: the window plays through the
			// sound card and draws the "audio" peaks.
			unsubscribe = hub.Subscribe(func(e studio.Event) {
				if e.Name == studio.EventPCM {
					return
				}
				runtime.EventsEmit(ctx, e.Name, e.Data)
			})
			if *modelArg != "" {
				go openAtStart(svc, *modelArg, *speak)
			}
		},
		OnShutdown: func(context.Context) {
			if unsubscribe != nil {
				unsubscribe()
			}
			if err := app.Shutdown(svc); err != nil {
				fmt.Fprintln(os.Stderr, "proscenium-studio: shutdown:", err)
			}
		},
		Bind:  []any{svc},
		Linux: &linux.Options{ProgramName: "proscenium", Icon: icon},
	}
	if err := attachWindowTest(opts); err != nil {
		return err
	}
	return wails.Run(opts)
}

// openAtStart loads dir (the window shows the progress) and, if asked,
// speaks the saved script with the saved settings; failures show in the
// window's model panel and the status line like any other.
func openAtStart(svc *app.Service, model string, speak bool) {
	dir, err := hfcache.ResolveModel(model, hfcache.HubDirs())
	if err == nil {
		_, err = svc.LoadModel(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-studio:", err)
		return
	}
	if !speak {
		return
	}
	st := svc.Settings()
	if _, err := svc.Speak(api.SpeechRequest{Text: st.Script, Sampling: st.Sampling, Seed: st.Seed, MaxFrames: st.MaxFrames}); err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-studio:", err)
	}
}
