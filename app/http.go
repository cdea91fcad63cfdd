package app

import (
	"net/http"
	"path/filepath"
	"time"

	"github.com/adrg/xdg"

	"proscenium/app/scene"
	"proscenium/app/server"
	"proscenium/app/studio"
	"proscenium/engine/hfcache"
)

// NewMux returns the routes of `proscenium serve` for s (server.NewMux:
// the UI, /api/<Method> for every method of s, its events and its takes'
// audio).
// InspectModel over HTTP answers for the model roots the studio knows
// (modelRoots) unless opt names others.
func NewMux(s *Service, hub *studio.Hub, opt server.Options) (*http.ServeMux, error) {
	if opt.ModelRoots == nil {
		opt.ModelRoots = func() []string { return modelRoots(s) }
	}
	opt.Scenes = scenes{s}
	return server.NewMux(s, s.takes, hub, opt)
}

// modelRoots are the folders the studio knows models in: the settings'
// model folder, the Hugging Face caches, the data folder (the demo model's)
// and the demo folder the service was given.
func modelRoots(s *Service) []string {
	roots := []string{s.Settings().ModelDir}
	roots = append(roots, hfcache.HubDirs()...)
	return append(roots, filepath.Join(xdg.DataHome, "proscenium"), s.demoDir)
}

// scenes serves the projects' scenes to the browser (GET
// /api/projects/{name}/scene) and the scene previews' audio (GET
// /api/scene-previews/{id}/pcm); not a Service method, so that the UI
// bindings do not expose it.
type scenes struct{ s *Service }

func (sc scenes) SceneDownload(project string) (scene.Download, error) {
	res, p, err := sc.s.sceneOf(project)
	if err != nil {
		return scene.Download{}, err
	}
	return scene.AsDownload(res, p.Name, time.Now())
}

func (sc scenes) ScenePreviewPCM(id int) ([]float32, int, error) { return sc.s.scenePreview(id) }

// LogRequests wraps the server's routes so that every speech API request
// is logged for the studio's server panel. A function, not a method, so
// that the UI bindings do not expose it.
func LogRequests(s *Service, h http.Handler) http.Handler { return s.server.LogRequests(h) }

// AttachServer tells the service that this process is the speech server
// at address (proscenium serve): the panel shows it and its requests, and
// the studio cannot stop it. A function, not a method, so that the UI
// bindings do not expose it.
func AttachServer(s *Service, address string) { s.server.Attach(address) }
