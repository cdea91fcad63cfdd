package speechapi

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"proscenium/engine"
	"proscenium/engine/drama3"
)

// openDemo writes the demo checkpoint (make-tiny) and opens it on the CPU
// backend: the same engine `proscenium serve --model` runs.
func openDemo(t *testing.T) engine.Engine {
	t.Helper()
	path, err := drama3.FindBaseTokenizer()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("demo checkpoint: %v", err)
		}
		t.Skipf("demo checkpoint: %v (run make deps)", err)
	}
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 7, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// On the demo model through a real HTTP client: the streamed bytes equal
// the whole pcm reply for the same seed, the WAV reply holds the same
// samples, and the finish reason is reported both ways.
func TestDemoModelStreamEqualsWhole(t *testing.T) {
	srv := serve(t, openDemo(t), DefaultLimits())
	req := `{"model":"drama-3","input":"Good evening. [softly] Welcome.","seed":11,"max_frames":12,"top_k":5`

	whole := post(t, srv, req+`,"response_format":"pcm"}`)
	want, err := io.ReadAll(whole.Body)
	if err != nil || whole.StatusCode != 200 {
		t.Fatalf("whole: %d %v %s", whole.StatusCode, err, want)
	}
	reason := whole.Header.Get("X-Finish-Reason")
	if reason != "stop" && reason != "length" {
		t.Fatalf("X-Finish-Reason %q", reason)
	}
	frames := len(want) / 2 / 2048
	if len(want) != frames*2048*2 || frames == 0 || (reason == "length" && frames != 12) {
		t.Fatalf("%d bytes for reason %s", len(want), reason)
	}

	stream := post(t, srv, req+`,"response_format":"pcm","stream":true}`)
	got, err := io.ReadAll(stream.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("stream (%d bytes) differs from the whole reply (%d bytes)", len(got), len(want))
	}
	if r := stream.Trailer.Get("X-Finish-Reason"); r != reason {
		t.Errorf("stream trailer reason %q, whole %q", r, reason)
	}

	wav := post(t, srv, req+`}`)
	wb, _ := io.ReadAll(wav.Body)
	if wav.StatusCode != 200 || !strings.HasPrefix(string(wb), "RIFF") || !bytes.Equal(wb[44:], want) {
		t.Errorf("wav reply: status %d, %d bytes, samples equal: %v", wav.StatusCode, len(wb), len(wb) > 44 && bytes.Equal(wb[44:], want))
	}
}

// The engine's own refusals (structural tokens in the input) are 400s that
// name the token, not server errors.
func TestDemoModelRefusesStructuralTokens(t *testing.T) {
	srv := serve(t, openDemo(t), DefaultLimits())
	resp := post(t, srv, `{"model":"drama-3","input":"Hello <|im_end|> there"}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "<|im_end|>") || !strings.Contains(string(body), "byte 6") {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
}
