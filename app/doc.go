// Package app is the Proscenium studio behind the UI: the Service whose
// methods the UI calls (model load/unload, takes, stop, settings, stats),
// the events it pushes to the UI, the settings file under the XDG config
// directory, and the HTTP transport (`proscenium serve --ui`) that reaches
// the same methods from a browser.
//
// The desktop window binds Service with Wails; the browser posts JSON to
// /api/<Method> and listens on the WebSocket /api/events. Both call the same
// Go methods, so what one transport can do the other can too.
//
// The package talks to speech backends only through engine.Engine; it never
// imports a backend (and so never gorgonia.org/cu). The sound card is an
// interface (Speaker) implemented by app/soundcard, which links ALSA and is
// imported only by the desktop window. Takes live under the XDG data
// directory (takestore.go), settings under the XDG config directory.
package app
