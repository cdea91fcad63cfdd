package takes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// format1Take is a take.json as the studio wrote it before its figures
// said their units: nanosecond durations, frames_per_second, sample_rate.
const format1Take = `{"format":1,"take":{"id":3,"name":"old","request":{"text":"Hi.","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"seed":0,"max_frames":10},` +
	`"state":"finished","frames":2,"finish":{"reason":"stop","frames":2,"audio_seconds":0.092,"time_to_first_audio":70257691,"elapsed":1500000000,` +
	`"real_time_factor":0.1,"stages":{"prefill":250000000,"codec":1000}},"error":"","started_ms":5,"frames_per_second":21.5,"samples":2,"sample_rate":44100,` +
	`"underruns":0,"stored":false},"codes":[[1,2],[3,4]],"pcm_file":"pcm.f32","pcm_format":"float32le"}`

// TestLoadTakeFormat1: a take saved in format 1 loads with its figures in
// format 2's units, and is written back in format 2's names only. (With
// upgradeFormat1 not called, the strict decode refuses the old names.)
func TestLoadTakeFormat1(t *testing.T) {
	st := takeStore{dir: t.TempDir()}
	dir := st.takeDir(3)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, takeMetaFile), []byte(format1Take), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, takePCMFile), make([]byte, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := st.load(3)
	if err != nil {
		t.Fatal(err)
	}
	tk, fin := rec.take, rec.take.Finish
	if tk.FramesPerSecond != 21.5 || tk.SampleRate != 44100 || tk.Name != "old" || len(rec.codes) != 2 {
		t.Errorf("take %+v", tk)
	}
	if fin.AudioS != 0.092 || fin.TimeToFirstAudioMs != 70.257691 || fin.ElapsedS != 1.5 || fin.StagesS["prefill"] != 0.25 || fin.StagesS["codec"] != 1e-6 || fin.RealTimeFactor != 0.1 {
		t.Errorf("finish %+v", fin)
	}
	meta, err := st.encodeMeta(tk, rec.codes)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"format":2`, `"time_to_first_audio_ms":70.257691`, `"elapsed_s":1.5`, `"stages_s":{`, `"frames_per_s":21.5`, `"sample_rate_hz":44100`, `"audio_s":0.092`} {
		if !strings.Contains(string(meta), want) {
			t.Errorf("written take.json lacks %s: %s", want, meta)
		}
	}
	for _, old := range []string{`"elapsed"`, `"time_to_first_audio"`, `"stages"`, `"sample_rate"`, `"frames_per_second"`, `"audio_seconds"`} {
		if strings.Contains(string(meta), old) {
			t.Errorf("written take.json has the old %s: %s", old, meta)
		}
	}
	if _, err := parseTakeMeta(meta, 3); err != nil {
		t.Errorf("format 2 take.json refused: %v", err)
	}
	// A format 1 file whose durations are not integer nanoseconds is refused, naming the field.
	bad := strings.Replace(format1Take, `"elapsed":1500000000`, `"elapsed":"1.5s"`, 1)
	if _, err := parseTakeMeta([]byte(bad), 3); err == nil || !strings.Contains(err.Error(), "elapsed") {
		t.Errorf("bad elapsed: %v", err)
	}
}
