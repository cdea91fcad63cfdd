//go:build !e2e

package main

import (
	"github.com/wailsapp/wails/v2/pkg/options"

	"proscenium/app"
)

// The studio people run has no window-test hooks (windowtest.go, -tags e2e).

func testDialogs(d app.Dialogs) app.Dialogs { return d }

func attachWindowTest(*options.App) error { return nil }
