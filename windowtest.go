//go:build e2e

package main

// The window test's hooks, built only with -tags e2e (make window-e2e; the
// studio people run has none of this: windowtest_off.go). With
// PROSCENIUM_WINDOW_TEST=FILE the window runs FILE's script in its page
// once the page is first ready; the script (frontend/e2e/window-driver.js)
// works the page as a person would, and everything it does goes through the
// window's own bindings, events and webview. It talks back with Wails events:
//
//	windowtest:log  TEXT        printed on stdout
//	windowtest:size {width, height}  the window at the display's top left
//	                            corner at that size (windowtest_gtk.go)
//	windowtest:shot {name, width, height}  that corner of the X display saved
//	                            as $PROSCENIUM_WINDOW_TEST_SHOTS/NAME.png
//	                            (ImageMagick's import); then windowtest:shot-done
//	                            {name, error} back to the page
//	windowtest:done {ok, message, record}  "windowtest: record JSON", then
//	                            "windowtest: PASS" or "windowtest: FAIL: …" on
//	                            stdout, and the window closes
//
// The native save dialog cannot be driven from the page: while the test
// runs it answers at once with the name it would propose, in
// $PROSCENIUM_WINDOW_TEST_SAVE_DIR, and says so on stdout.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"proscenium/app"
)

const (
	windowTestEnv      = "PROSCENIUM_WINDOW_TEST"
	windowTestSaveEnv  = "PROSCENIUM_WINDOW_TEST_SAVE_DIR"
	windowTestShotsEnv = "PROSCENIUM_WINDOW_TEST_SHOTS"
)

// testDialogs answers the save dialog with its proposal under the test's
// folder while a window test runs; otherwise it is d.
func testDialogs(d app.Dialogs) app.Dialogs {
	dir := os.Getenv(windowTestSaveEnv)
	if os.Getenv(windowTestEnv) == "" || dir == "" {
		return d
	}
	return acceptingDialogs{Dialogs: d, dir: dir}
}

type acceptingDialogs struct {
	app.Dialogs
	dir string
}

func (a acceptingDialogs) ChooseSaveFile(title, _, defaultName string) (string, error) {
	path := filepath.Join(a.dir, defaultName)
	fmt.Printf("windowtest: save dialog %q answered %s\n", title, path)
	return path, nil
}

// attachWindowTest runs the test's script in the page once the DOM is
// ready and wires its events, when PROSCENIUM_WINDOW_TEST names a script.
func attachWindowTest(opts *options.App) error {
	file := os.Getenv(windowTestEnv)
	if file == "" {
		return nil
	}
	script, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("window test: %w", err)
	}
	shots := os.Getenv(windowTestShotsEnv)
	var once sync.Once
	opts.OnDomReady = func(ctx context.Context) {
		once.Do(func() {
			runtime.EventsOn(ctx, "windowtest:log", func(data ...any) { fmt.Println("windowtest:", first(data)) })
			runtime.EventsOn(ctx, "windowtest:size", func(data ...any) {
				w, _ := field(data, "width").(float64)
				h, _ := field(data, "height").(float64)
				placeWindow(int(w), int(h))
			})
			runtime.EventsOn(ctx, "windowtest:shot", func(data ...any) {
				name, _ := field(data, "name").(string)
				w, _ := field(data, "width").(float64)
				h, _ := field(data, "height").(float64)
				msg := ""
				if err := saveWindowShot(shots, name, int(w), int(h)); err != nil {
					msg = err.Error()
				}
				runtime.EventsEmit(ctx, "windowtest:shot-done", map[string]string{"name": name, "error": msg})
			})
			runtime.EventsOn(ctx, "windowtest:done", func(data ...any) {
				if rec, err := json.Marshal(field(data, "record")); err == nil {
					fmt.Println("windowtest: record", string(rec))
				}
				if ok, _ := field(data, "ok").(bool); ok {
					fmt.Println("windowtest: PASS")
				} else {
					fmt.Println("windowtest: FAIL:", field(data, "message"))
				}
				runtime.Quit(ctx)
			})
			runtime.WindowExecJS(ctx, string(script))
		})
	}
	return nil
}

func first(data []any) any {
	if len(data) == 0 {
		return nil
	}
	return data[0]
}

func field(data []any, key string) any {
	m, _ := first(data).(map[string]any)
	return m[key]
}

// saveWindowShot saves the window's area of the X display as DIR/NAME.png:
// width×height at the top left corner, where windowtest:size put it.
func saveWindowShot(dir, name string, width, height int) error {
	if dir == "" || name == "" || filepath.Base(name) != name || width <= 0 || height <= 0 {
		return fmt.Errorf("no screenshot folder (%s), a bad name %q or size %d×%d", windowTestShotsEnv, name, width, height)
	}
	out, err := exec.Command("import", "-window", "root", "-crop", fmt.Sprintf("%dx%d+0+0", width, height), "+repage",
		filepath.Join(dir, name+".png")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("import: %v: %s", err, out)
	}
	return nil
}
