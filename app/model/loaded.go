package model

import (
	"fmt"

	"proscenium/app/studio"
	"proscenium/engine/api"
)

// Loaded returns the loaded engine, or an error saying why there is none
// (no model, or one still loading): the speech API shares the studio's one
// engine through it.
func (c *Control) Loaded() (api.Engine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.eng == nil {
		if c.status.State == ModelLoading {
			return nil, fmt.Errorf("%w: %s is still loading", studio.ErrNoModel, c.status.Dir)
		}
		return nil, studio.ErrNoModel
	}
	return c.eng, nil
}
