package speechapi

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"proscenium/app/voice"
	"proscenium/engine/api"
	"proscenium/engine/audio/encode"
)

var three = 3

// fuzzVoices are the user voices the fuzz target resolves against.
var fuzzVoices = []voice.Voice{
	{Name: "narrator", Speaker: &three, Direction: "calm, low", Sampling: api.Sampling{Temperature: 0.7, TopP: 0.8, TopK: 20}, Seed: 9},
	{Name: "alloy", Direction: "bright", Sampling: api.DefaultSampling()},
}

// FuzzParseSpeech: any body either is refused with a requestError or gives a
// request inside the limits, whose sampler settings survived float32 and
// whose script ends with the input; nothing panics.
func FuzzParseSpeech(f *testing.F) {
	for _, s := range []string{
		`{"model":"drama-3","input":"Hello."}`,
		`{"model":"tts-1","input":"x","voice":"narrator","response_format":"opus","stream_format":"sse","seed":3,"max_frames":10,"top_k":5,"top_p":0.5,"temperature":0.7}`,
		`{"model":"gpt-4o-mini-tts","input":"x","voice":{"id":"alloy"},"instructions":"whispering","speed":1.5,"sample_rate":24000}`,
		`{"model":"drama-3","input":"x","speaker":"narrator","max_new_tokens":40,"stream":true,"response_format":"flac"}`,
		`{"model":"drama-3","input":"hi","top_p":1e-50}`,
		`{"model":"drama-3","input":"hi","temperature":1e300}`,
		`{"model":"drama-3","input":"hi","colour":"red"}`,
		`{"model":"drama-3","input":7}`,
		`{"model":`, ``, `[]`, `null`, `{"model":"drama-3","input":"hi"} {}`,
	} {
		f.Add([]byte(s))
	}
	lim := DefaultLimits()
	lim.MaxInputChars = 64
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseSpeech(body, lim, "drama-3", fuzzVoices)
		if err != nil {
			var re *requestError
			if !errors.As(err, &re) || re.Message == "" {
				t.Fatalf("error %v is not a requestError with a message", err)
			}
			return
		}
		temp, topP := float64(r.Sampling.Temperature), float64(r.Sampling.TopP)
		switch {
		case !utf8.ValidString(r.Text) || strings.TrimSpace(r.Text) == "":
			t.Fatalf("accepted text %q", r.Text)
		case !slices.Contains(ModelNames("drama-3"), r.Model):
			t.Fatalf("accepted model %q", r.Model)
		case !slices.Contains(encode.Formats(), r.Format) || !slices.Contains(SampleRates, r.SampleRate):
			t.Fatalf("accepted format %q at %d Hz", r.Format, r.SampleRate)
		case r.StreamFormat != "" && r.StreamFormat != StreamAudio && r.StreamFormat != StreamSSE:
			t.Fatalf("accepted stream_format %q", r.StreamFormat)
		case !(r.Speed >= 0.25 && r.Speed <= 4):
			t.Fatalf("accepted speed %v", r.Speed)
		case r.MaxFrames < 1 || r.MaxFrames > lim.MaxFrames():
			t.Fatalf("accepted max_frames %d", r.MaxFrames)
		case !(topP > 0 && topP <= 1) || r.Sampling.TopK < 0 || !(temp >= 0 && temp <= 100) || math.IsInf(temp, 0):
			t.Fatalf("accepted sampling %+v", r.Sampling)
		case r.Voice != voice.Default && !slices.ContainsFunc(fuzzVoices, func(v voice.Voice) bool { return v.Name == r.Voice }):
			t.Fatalf("accepted voice %q", r.Voice)
		}
	})
}
