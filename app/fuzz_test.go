package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoadSettings: any file either loads into settings that validate and
// survive an encode/load round trip, or is refused with an error; never a panic.
func FuzzLoadSettings(f *testing.F) {
	f.Add([]byte(`{"script":"Hi","sampling":{"temperature":0.7,"top_p":0.9,"top_k":30},"seed":3,"max_frames":100,"model_dir":"/m"}`))
	f.Add([]byte(`{"seed":9007199254740992}`))
	f.Add([]byte(`{"sampling":{"top_p":1e-45}}`))
	f.Add([]byte(`{} x`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSettings(p)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("loaded settings do not validate: %v", err)
		}
		out, err := json.Marshal(s) // SaveSettings' encoding, without its fsync
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := LoadSettings(p)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, s)
		}
	})
}

// FuzzDecodeArgs: the HTTP argument decoder refuses or decodes, never panics,
// and what it decodes has the method's argument types.
func FuzzDecodeArgs(f *testing.F) {
	f.Add([]byte(`[{"text":"x","sampling":{"temperature":1,"top_p":1,"top_k":0},"seed":0,"max_frames":1}]`))
	f.Add([]byte(`["/tmp"]`))
	f.Add([]byte(``))
	f.Add([]byte(`[1,2]`))
	methods, err := apiMethods(&Service{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for name, m := range methods {
			args, err := decodeArgs(body, m.args)
			if err != nil {
				continue
			}
			if len(args) != len(m.args) {
				t.Fatalf("%s: %d args decoded for %d parameters", name, len(args), len(m.args))
			}
			for i, a := range args {
				if a.Type() != m.args[i] {
					t.Fatalf("%s: argument %d has type %v, want %v", name, i, a.Type(), m.args[i])
				}
			}
		}
	})
}

// FuzzLoadTake: any take.json either loads into a take that validates, or
// is refused with an error; never a panic.
func FuzzLoadTake(f *testing.F) {
	f.Add([]byte(`{"format":1,"take":{"id":1,"name":"","request":{"text":"Hi.","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"seed":0,"max_frames":10},"state":"finished","frames":1,"finish":{"reason":"stop","frames":1,"audio_seconds":0.046,"time_to_first_audio":1,"elapsed":1,"real_time_factor":0.1,"stages":{}},"error":"","started_ms":0,"frames_per_second":0,"samples":4,"sample_rate":44100,"underruns":0,"stored":false},"codes":[[1,2]],"pcm_file":"pcm.f32","pcm_format":"float32le"}`))
	f.Add([]byte(`{"format":1,"take":{"id":1,"state":"failed","samples":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := parseTakeMeta(data, 1)
		if err != nil {
			return
		}
		tk := tf.Take
		if tk.ID != 1 || tk.Samples < 0 || tk.SampleRate != OutputSampleRate || ValidateSpeech(tk.Request) != nil ||
			(tk.State != TakeFinished && tk.State != TakeFailed) || (tk.State == TakeFinished && len(tf.Codes) != tk.Finish.Frames) {
			t.Fatalf("accepted an invalid take: %+v", tk)
		}
	})
}
