package cpu

import "proscenium/engine/drama3"

// Random float32 trees with their geometry, for the backbone, tower and
// backend tests.

type testBackbone struct {
	Geometry drama3.TextConfig
	drama3.Backbone[[]float32]
}

type testTower struct {
	Geometry drama3.AudioConfig
	drama3.Tower[[]float32]
}

func newTestBackbone(w *testBackbone) (*Backbone, error) {
	return NewBackbone(&w.Geometry, &w.Backbone)
}

func newTestTower(w *testTower) (*Tower, error) { return NewTower(&w.Geometry, &w.Tower) }
