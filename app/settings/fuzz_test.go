package settings

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
	f.Add([]byte(`{"voices":[{"name":"narrator","speaker":3,"direction":"calm","sampling":{"temperature":0.7,"top_p":0.9,"top_k":30},"seed":5},{"name":"nova","speaker":null,"direction":"","sampling":{"temperature":1,"top_p":1,"top_k":0},"seed":0}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(p)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("loaded settings do not validate: %v", err)
		}
		out, err := json.Marshal(s) // Save's encoding, without its fsync
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := Load(p)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, s)
		}
	})
}
