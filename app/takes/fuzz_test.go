package takes

import (
	"strconv"
	"strings"
	"testing"

	"proscenium/app/playback"
	"proscenium/app/settings"
)

// FuzzLoadTake: any take.json either loads into a take that validates, or
// is refused with an error; never a panic.
func FuzzLoadTake(f *testing.F) {
	f.Add([]byte(`{"format":1,"take":{"id":1,"name":"","request":{"text":"Hi.","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"seed":0,"max_frames":10},"state":"finished","frames":1,"finish":{"reason":"stop","frames":1,"audio_seconds":0.046,"time_to_first_audio":1,"elapsed":1,"real_time_factor":0.1,"stages":{}},"error":"","started_ms":0,"frames_per_second":0,"samples":4,"sample_rate":44100,"underruns":0,"stored":false},"codes":[[1,2]],"pcm_file":"pcm.f32","pcm_format":"float32le"}`))
	f.Add([]byte(format1Take))
	f.Add([]byte(`{"format":2,"take":{"id":1,"name":"","request":{"text":"Hi.","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"seed":0,"max_frames":10},"state":"finished","frames":1,"finish":{"reason":"stop","frames":1,"audio_s":0.046,"time_to_first_audio_ms":1.5,"elapsed_s":1,"real_time_factor":0.1,"stages_s":{}},"error":"","started_ms":0,"frames_per_s":0,"samples":4,"sample_rate_hz":44100,"underruns":0,"stored":false},"codes":[[1,2]],"pcm_file":"pcm.f32","pcm_format":"float32le"}`))
	f.Add([]byte(`{"format":1,"take":{"id":1,"state":"failed","samples":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := parseTakeMeta(data, 1)
		if err != nil {
			return
		}
		tk := tf.Take
		if tk.ID != 1 || tk.Samples < 0 || tk.SampleRate != playback.OutputSampleRate || settings.ValidateSpeech(tk.Request) != nil ||
			(tk.State != TakeFinished && tk.State != TakeFailed) || (tk.State == TakeFinished && len(tf.Codes) != tk.Finish.Frames) {
			t.Fatalf("accepted an invalid take: %+v", tk)
		}
	})
}

// FuzzTempTakeID: a name is one of our temporary take directories exactly
// when it reads .take-<id>-<digits>, and then names that id.
func FuzzTempTakeID(f *testing.F) {
	for _, s := range []string{".take-7-123", ".take-0-1", ".take-7-", ".take-x-1", "7", ".take-7-12a", ".take--1-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, ok := tempTakeID(name)
		if !ok {
			return
		}
		rest, _ := strings.CutPrefix(name, tempTakePrefix+strconv.Itoa(id)+"-")
		if id <= 0 || rest == name || rest == "" || strings.Trim(rest, "0123456789") != "" {
			t.Fatalf("%q read as temporary take %d", name, id)
		}
	})
}
