package app

import (
	"fmt"

	"proscenium/engine"
)

// LoadedEngine returns the service's loaded engine, or an error saying why
// there is none (no model, or one still loading). It is a function, not a
// method, so that the UI bindings do not expose it; the speech API of
// `proscenium serve` uses it to share the studio's one engine.
func LoadedEngine(s *Service) (engine.Engine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng == nil {
		if s.model.State == ModelLoading {
			return nil, fmt.Errorf("%w: %s is still loading", ErrNoModel, s.model.Dir)
		}
		return nil, ErrNoModel
	}
	return s.eng, nil
}
