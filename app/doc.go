// Package app is the Proscenium studio's facade: the Service whose methods
// the UI calls (model load/unload, takes, stop, settings, voices, the
// speech server panel, playback, stats), bound by Wails in the desktop
// window and reached over HTTP by the browser (POST /api/<Method>, the
// WebSocket /api/events: app/server). Both call the same Go methods, so
// what one transport can do the other can too.
//
// Service owns no feature: each method hands the call to the package that
// owns it, and New wires those packages to each other.
//
//	app/settings   the settings, their limits and their file (Store)
//	app/model      finding, inspecting, loading and unloading the model; its
//	               memory readouts, tokenizer and codec (Control)
//	app/takes      the takes list, the running take, the takes on disk, the
//	               size limit, peaks and export (List)
//	app/voices     the user's named voices and their recordings (Editor)
//	app/server     HTTP: routes, policy, access log, the server panel (Panel)
//	app/playback   the sound card as the studio sees it (Speaker)
//	app/studio     errors, events and notices every package shares
//
// app/soundcard implements playback.Speaker with ALSA and is imported only
// by the desktop window; app/speechapi is the OpenAI-compatible speech API,
// app/voice a voice and app/voicelib the voice library's files.
//
// No app package imports a backend: models are opened through engine/open,
// which also answers the questions about the GPU (open.DescribeGPU,
// open.GPUModelBytes) and encodes references on the CPU
// (open.LoadCodecEncoder). tools/layers tests these rules.
package app
