package app

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/studio"
	"proscenium/app/voice"
	"proscenium/engine/api"
)

// Voices are saved in the settings file and come back on the next start;
// an invalid voice changes nothing and says which field is wrong.
func TestVoicesSaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	svc, err := New(Config{SettingsPath: path})
	if err != nil {
		t.Fatal(err)
	}
	four := 4
	narrator := voice.Voice{Name: "narrator", Speaker: &four, Direction: "calm", Sampling: api.DefaultSampling(), Seed: 12}
	if _, err := svc.SaveVoice(narrator); err != nil {
		t.Fatal(err)
	}
	narrator.Seed = 13
	vs, err := svc.SaveVoice(narrator) // same name: replaced
	if err != nil || len(vs) != 1 || vs[0].Seed != 13 {
		t.Fatalf("replace: %v %+v", err, vs)
	}
	for _, bad := range []struct {
		v    voice.Voice
		says string
	}{
		{voice.Voice{Name: "default", Sampling: api.DefaultSampling()}, "cannot be redefined"},
		{voice.Voice{Name: "x", Direction: "a [b]", Sampling: api.DefaultSampling()}, "direction"},
		{voice.Voice{Name: "x", Sampling: api.Sampling{TopP: 0}}, "top_p"},
		{voice.Voice{Name: "x", Speaker: new(int), Sampling: api.DefaultSampling(), Seed: 1 << 60}, "seed"},
	} {
		if _, err := svc.SaveVoice(bad.v); err == nil || !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%+v: %v, want ErrInvalid saying %q", bad.v, err, bad.says)
		}
	}
	if _, err := svc.DeleteVoice("nobody"); err == nil {
		t.Error("deleting an unknown voice succeeded")
	}
	again, err := New(Config{SettingsPath: path})
	if err != nil {
		t.Fatal(err)
	}
	if vs := again.Voices(); len(vs) != 1 || vs[0].Name != "narrator" || *vs[0].Speaker != 4 || vs[0].Seed != 13 {
		t.Fatalf("reloaded %+v", vs)
	}
	if vs, err := again.DeleteVoice("narrator"); err != nil || len(vs) != 0 {
		t.Fatalf("delete: %v %+v", err, vs)
	}
}
