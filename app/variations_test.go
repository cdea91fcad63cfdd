package app

import (
	"errors"
	"strings"
	"testing"

	"proscenium/app/studio"
	"proscenium/app/takes"
)

// Speak ×4 sweeping the temperature makes four takes together, one per
// value, grouped under the first's id, each with its own audio.
func TestSpeakVariationsSweepsOneSetting(t *testing.T) {
	svc := newTakesService(t, t.TempDir(), 6)
	req := speech("Four variations.")
	started, err := svc.SpeakVariations(takes.Variations{Request: req, Count: 4, Sweep: takes.SweepTemperature, Values: []float64{0.5, 0.7, 0.9, 1.1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 4 {
		t.Fatalf("%d takes started, want 4", len(started))
	}
	group := started[0].ID
	waitFor(t, func() bool {
		for _, x := range svc.Takes() {
			if x.Group == group && x.State == takes.TakeRunning {
				return false
			}
		}
		return true
	})
	byID := map[int]takes.Take{}
	for _, x := range svc.Takes() {
		byID[x.ID] = x
	}
	for i, s := range started {
		got := byID[s.ID]
		want := []float32{0.5, 0.7, 0.9, 1.1}[i]
		if got.Group != group || got.State != takes.TakeFinished || got.Samples == 0 || got.Request.Sampling.Temperature != want ||
			got.Request.Seed != req.Seed || !strings.HasSuffix(got.Name, "temperature "+[]string{"0.5", "0.7", "0.9", "1.1"}[i]) {
			t.Errorf("variation %d: %+v", i, got)
		}
	}
	if running, _ := svc.Stop(); running {
		t.Error("Stop found a take running after all four ended")
	}
}

// Speak ×N by seed takes the request's seed and the ones after it.
func TestSpeakVariationsBySeed(t *testing.T) {
	svc := newTakesService(t, t.TempDir(), 3)
	req := speech("Seeds.")
	req.Seed = 40
	started, err := svc.SpeakVariations(takes.Variations{Request: req, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range started {
		if s.Request.Seed != 40+uint64(i) || s.Name != "×3 · seed "+[]string{"40", "41", "42"}[i] {
			t.Errorf("variation %d: seed %d, name %q", i, s.Request.Seed, s.Name)
		}
	}
	svc.Stop()
}

// Bad variations are refused naming the field; no take starts.
func TestSpeakVariationsRefusesBadInput(t *testing.T) {
	svc := newTakesService(t, t.TempDir(), 3)
	req := speech("No.")
	for _, c := range []struct {
		v    takes.Variations
		says string
	}{
		{takes.Variations{Request: req, Count: 1}, "count 1"},
		{takes.Variations{Request: req, Count: 9}, "count 9"},
		{takes.Variations{Request: req, Count: 2, Sweep: "speed"}, `sweep "speed"`},
		{takes.Variations{Request: req, Count: 3, Sweep: takes.SweepTopP, Values: []float64{0.5, 0.9}}, "values: 2 given for 3"},
		{takes.Variations{Request: req, Count: 2, Sweep: takes.SweepTopK, Values: []float64{10, 1.5}}, "values[1]: top_k 1.5"},
		{takes.Variations{Request: req, Count: 2, Sweep: takes.SweepTopP, Values: []float64{0.5, 2}}, "values[1]"},
		{takes.Variations{Request: req, Count: 2, Values: []float64{1, 2}}, "values: seeds"},
	} {
		_, err := svc.SpeakVariations(c.v)
		if !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want ErrInvalid saying %q", c.v, err, c.says)
		}
	}
	if n := len(svc.Takes()); n != 0 {
		t.Fatalf("%d takes after refused variations", n)
	}
}
