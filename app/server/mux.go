// Package server is the studio over HTTP (`proscenium serve`, and the
// speech server the desktop window starts): the routes that expose the
// service's methods, events and take audio to a browser, the policy every
// request passes (Host, Origin, API key, bodies, transport limits), the
// access log, and the server panel (Panel: the server's state and its
// request log, behind its own lock).
//
// It is transport only: it reaches the studio through the service value
// app hands it (its exported methods, found by reflection as Wails finds
// them) and through TakeAudio, and never imports app, the model or a
// backend.
package server

import (
	"io/fs"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"proscenium/app/scene"
	"proscenium/app/studio"
	"proscenium/app/takes"
)

// Options configure NewMux.
type Options struct {
	// UI is the built front end (frontend.Dist()); with it the mux serves
	// the UI at / and its API under /api/. Nil: no UI routes.
	UI fs.FS
	// LoopbackOnly says the server listens on a loopback address: only then
	// are methods that write files on the server (localOnlyMethods) answered.
	LoopbackOnly bool
	// ModelRoots are the folders under which InspectModel answers over
	// HTTP (modelroots.go); nil answers for none.
	ModelRoots func() []string
	// Scenes serves GET /api/projects/{name}/scene; nil: no such route.
	Scenes Scenes
}

// Scenes is where a project's scene comes from, ready for a download.
type Scenes interface {
	SceneDownload(project string) (scene.Download, error)
	// ScenePreviewPCM is a scene preview's audio (float32 mono) and rate.
	ScenePreviewPCM(id int) ([]float32, int, error)
}

// TakeAudio is what the take routes serve: a take's PCM and its export
// file (takes.List).
type TakeAudio interface {
	TakePCM(id int) ([]float32, takes.Take, error)
	TakeFile(id int, format string) (name, mediaType string, data []byte, err error)
}

// NewMux returns the routes of `proscenium serve`: svc is the service
// (app.Service) whose exported methods /api/ answers, audio its takes.
// Other endpoints (the speech API) are added by the caller on the returned
// mux, e.g.
// mux.Handle("POST /v1/audio/speech", h); the whole mux is then served
// through Protect, which checks Host, Origin, API key and bodies.
//
// UI routes:
//
//	GET  /               the built front end
//	POST /api/{method}   a method of svc: JSON array of arguments in, JSON value out
//	GET  /api/events     WebSocket: every studio.Event as JSON {name, data};
//	                     PCM chunks (EventPCM) as binary messages (takes.PCMChunk)
//	GET  /api/takes/{id}/pcm  a take's audio: float32 little-endian, mono
//	GET  /api/takes/{id}/export?format=F  a take encoded as ExportTake
//	                     would write it, as a download: the browser saves
//	                     it where its user says, never the server
//	GET  /api/projects/{name}/scene  a project's scene (a zip with its
//	                     line files when the project asks for them), what
//	                     it measures in X-Scene-Loudness/-True-Peak/-Limited
//	                     (and X-Scene-Note: line files kept quieter)
//	GET  /api/scene-previews/{id}/pcm  a scene preview's audio (the
//	                     service's PreviewScene): float32 little-endian, mono
func NewMux(svc any, audio TakeAudio, hub *studio.Hub, opt Options) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	if opt.UI == nil {
		return mux, nil
	}
	methods, err := apiMethods(svc)
	if err != nil {
		return nil, err
	}

	mux.Handle("POST /api/{method}", localOnly(opt.LoopbackOnly, apiHandler(methods, opt.ModelRoots)))
	mux.Handle("GET /api/events", eventsHandler(hub))
	mux.Handle("GET /api/takes/{id}/pcm", pcmHandler("take", func(id int) ([]float32, int, error) {
		pcm, t, err := audio.TakePCM(id)
		return pcm, t.SampleRate, err
	}))
	mux.Handle("GET /api/takes/{id}/export", takeFileHandler(audio))
	if opt.Scenes != nil {
		mux.Handle("GET /api/projects/{name}/scene", sceneHandler(opt.Scenes))
		mux.Handle("GET /api/scene-previews/{id}/pcm", pcmHandler("scene preview", opt.Scenes.ScenePreviewPCM))
	}
	files := http.FileServerFS(opt.UI)
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	return mux, nil
}

// localOnlyMethods write files wherever the caller names: only someone at
// this machine (a server on a loopback address) may call them.
var localOnlyMethods = map[string]bool{"ExportTake": true, "ExportScene": true, "ExportLexicon": true, "ExportScreenplay": true}

func localOnly(loopbackOnly bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackOnly && localOnlyMethods[r.PathValue("method")] {
			writeJSON(w, http.StatusForbidden, apiError{r.PathValue("method") +
				" writes files on the server: it is answered only when the server listens on a loopback address"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// sceneHandler serves a project's scene for the browser to save.
func sceneHandler(scenes Scenes) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := scenes.SceneDownload(r.PathValue("name"))
		if err != nil {
			writeJSON(w, statusOf(err), apiError{err.Error()})
			return
		}
		h := w.Header()
		h.Set("Content-Type", d.MediaType)
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.Name}))
		h.Set("Content-Length", strconv.Itoa(len(d.Data)))
		h.Set("X-Scene-Loudness", strconv.FormatFloat(d.Loudness, 'f', 2, 64))
		h.Set("X-Scene-True-Peak", strconv.FormatFloat(d.TruePeak, 'f', 2, 64))
		h.Set("X-Scene-Limited", strconv.FormatBool(d.Limited))
		if d.Note != "" {
			h.Set("X-Scene-Note", d.Note)
		}
		w.Write(d.Data)
	})
}

// pathID is the positive number in the request's {id}; else it answers
// 400, naming what the number is of, and reports false.
func pathID(w http.ResponseWriter, r *http.Request, what string) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id <= 0 {
		writeJSON(w, http.StatusBadRequest, apiError{what + " id must be a positive number"})
		return 0, false
	}
	return id, true
}

// pcmHandler serves the audio of the {id} in the path for the browser to
// play (a take's: replay, A/B; a scene preview's): float32 little-endian,
// mono, its rate in X-Sample-Rate-Hz.
func pcmHandler(what string, audio func(id int) ([]float32, int, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, what)
		if !ok {
			return
		}
		pcm, rate, err := audio(id)
		if err != nil {
			writeJSON(w, statusOf(err), apiError{err.Error()})
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Sample-Rate-Hz", strconv.Itoa(rate))
		w.Header().Set("Content-Length", strconv.Itoa(4*len(pcm)))
		w.Write(takes.EncodeFloat32LE(pcm))
	})
}

// takeFileHandler serves a take as an export file (format: an Export*
// name, WAV 16-bit by default) with its proposed name, for the browser to
// save through its own download.
func takeFileHandler(audio TakeAudio) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "take")
		if !ok {
			return
		}
		name, mediaType, data, err := audio.TakeFile(id, r.URL.Query().Get("format"))
		if err != nil {
			writeJSON(w, statusOf(err), apiError{err.Error()})
			return
		}
		w.Header().Set("Content-Type", mediaType)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	})
}

// eventsBuffer is how many events a WebSocket client may lag behind before
// it is disconnected (it reconnects and reads the state afresh).
const eventsBuffer = 256

func eventsHandler(hub *studio.Hub) http.Handler {
	// Protect has checked Origin (the server's own or one the user allowed).
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, Subprotocols: []string{wsProtocol}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has answered
		}
		defer conn.Close()
		events := make(chan studio.Event, eventsBuffer)
		lagged := make(chan struct{})
		unsubscribe := hub.Subscribe(func(e studio.Event) {
			select {
			case events <- e:
			default:
				select {
				case <-lagged:
				default:
					close(lagged)
				}
			}
		})
		defer unsubscribe()

		closed := make(chan struct{})
		go func() { // reads only to notice the client going away
			defer close(closed)
			for {
				if _, _, err := conn.NextReader(); err != nil {
					return
				}
			}
		}()
		for {
			select {
			case e := <-events:
				conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
				var err error
				if b, ok := e.Data.(studio.BinaryEvent); ok {
					err = conn.WriteMessage(websocket.BinaryMessage, b.BinaryMessage())
				} else {
					err = conn.WriteJSON(e)
				}
				if err != nil {
					return
				}
			case <-lagged:
				conn.WriteControl(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "too far behind"), time.Now().Add(time.Second))
				return
			case <-closed:
				return
			case <-r.Context().Done():
				return
			}
		}
	})
}
