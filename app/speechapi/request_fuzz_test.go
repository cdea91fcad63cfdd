package speechapi

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseSpeech: any body either is refused with a requestError or gives a
// request inside the limits; nothing panics.
func FuzzParseSpeech(f *testing.F) {
	for _, s := range []string{
		`{"model":"drama-3","input":"Hello."}`,
		`{"model":"drama-3","input":"x","response_format":"pcm","stream":true,"seed":3,"max_frames":10,"top_k":5,"top_p":0.5,"temperature":0.7}`,
		`{"model":"drama-3","input":"hi","colour":"red"}`,
		`{"model":"drama-3","input":7}`,
		`{"model":`, ``, `[]`, `null`, `{"model":"drama-3","input":"hi"} {}`,
	} {
		f.Add([]byte(s))
	}
	lim := DefaultLimits()
	lim.MaxInputChars = 64
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseSpeech(body, lim, "drama-3")
		if err != nil {
			var re *requestError
			if !errors.As(err, &re) || re.Message == "" {
				t.Fatalf("error %v is not a requestError with a message", err)
			}
			return
		}
		switch {
		case strings.TrimSpace(r.Text) == "" || !utf8.ValidString(r.Text) || utf8.RuneCountInString(r.Text) > lim.MaxInputChars:
			t.Fatalf("accepted input %q", r.Text)
		case r.Format != FormatWAV && r.Format != FormatPCM, r.Stream && r.Format != FormatPCM:
			t.Fatalf("accepted format %q stream %v", r.Format, r.Stream)
		case r.MaxFrames < 1 || r.MaxFrames > lim.MaxFrames:
			t.Fatalf("accepted max_frames %d", r.MaxFrames)
		case !(r.Sampling.TopP > 0 && r.Sampling.TopP <= 1) || r.Sampling.TopK < 0 || !(r.Sampling.Temperature >= 0):
			t.Fatalf("accepted sampling %+v", r.Sampling)
		}
	})
}
