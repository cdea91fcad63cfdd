// Package frontend holds the built studio UI (frontend/dist, made by
// `make frontend`) for the desktop window and `proscenium serve --ui`.
// The sources beside it are the Svelte + TypeScript app that Vite builds.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built files with index.html at the root.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path: fs.Sub cannot fail here
	}
	return sub
}
