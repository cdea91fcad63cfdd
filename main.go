// Command proscenium-studio is the Proscenium desktop window: Wails shows
// the built front end (frontend/dist) and binds the app service to it.
// Build with `make studio` (tags desktop,production) or `make run`.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"proscenium/app"
	"proscenium/engine"
	"proscenium/frontend"
)

// openModel opens a checkpoint directory for the app service: the engine's
// open-by-directory (the CPU backend).
var openModel app.Opener = func(dir string) (engine.Engine, error) {
	return engine.Open(dir, engine.Options{})
}

//go:embed build/appicon.png
var icon []byte

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-studio:", err)
		os.Exit(1)
	}
}

func run() error {
	hub := app.NewHub()
	svc, err := app.New(app.Config{SettingsPath: app.DefaultSettingsPath(), Events: hub, Open: openModel})
	if err != nil {
		return err
	}
	var unsubscribe func()
	return wails.Run(&options.App{
		Title:            "Proscenium",
		Width:            1280,
		Height:           820,
		MinWidth:         960,
		MinHeight:        640,
		BackgroundColour: &options.RGBA{R: 24, G: 24, B: 27, A: 255},
		AssetServer:      &assetserver.Options{Assets: frontend.Dist()},
		OnStartup: func(ctx context.Context) {
			// Service events reach the window as Wails events of the same name.
			unsubscribe = hub.Subscribe(func(e app.Event) { runtime.EventsEmit(ctx, e.Name, e.Data) })
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
	})
}
