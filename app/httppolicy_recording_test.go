package app

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"proscenium/app/server"
	"proscenium/app/studio"
)

// wavTone is a mono 16-bit WAV of seconds of a gliding tone at rate Hz.
func wavTone(seconds float64, rate int) []byte {
	n := int(seconds * float64(rate))
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		binary.Write(&b, le, v)
	}
	b.WriteString("data")
	binary.Write(&b, le, uint32(2*n))
	for i := range n {
		t := float64(i) / float64(rate)
		binary.Write(&b, le, int16(8000*math.Sin(2*math.Pi*(180+40*t)*t)))
	}
	return b.Bytes()
}

// The browser's studio sends a voice's recording as JSON (base64) to
// POST /api/CreateVoice: a 12 s WAV (1.4 MB as JSON, past the 1 MiB other
// methods get) makes a voice; other methods keep the 1 MiB cap, and a
// recording past the voice library's limit is refused by size before it
// is read on.
func TestAPIRecordingBodies(t *testing.T) {
	svc := voiceService(t, &testEngine{frames: 1})
	mux, err := NewMux(svc, studio.NewHub(), server.Options{UI: fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.Protect(mux, server.HTTPPolicy{}))
	t.Cleanup(srv.Close)

	rec := wavTone(12, 44100)
	args, _ := json.Marshal([]any{"Ada", "A gliding tone, twelve seconds of it.", base64.StdEncoding.EncodeToString(rec)})
	if len(args) <= 1<<20 {
		t.Fatalf("the test's body is %d bytes: not past the 1 MiB cap", len(args))
	}
	status, body := post(t, srv, "CreateVoice", string(args), nil)
	if status != 200 || !strings.Contains(body, `"Ada"`) {
		t.Fatalf("CreateVoice with a %d-byte body: %d %s", len(args), status, body)
	}
	if n := len(svc.Voices()); n != 1 {
		t.Errorf("voices after CreateVoice: %d", n)
	}
	big := `["` + strings.Repeat("a", 1<<20) + `"]`
	if status, body := post(t, srv, "CountTokens", big, nil); status != 413 {
		t.Errorf("CountTokens with a %d-byte body: %d %s, want 413", len(big), status, body)
	}
	huge := `["Bob","Hi.","` + strings.Repeat("A", 25<<20) + `"]`
	if status, body := post(t, srv, "CreateVoice", huge, nil); status != 413 || !strings.Contains(body, "larger than") {
		t.Errorf("CreateVoice with a %d-byte body: %d %s, want 413", len(huge), status, body)
	}
	if n := len(svc.Voices()); n != 1 {
		t.Errorf("refusals changed the voices: %d", n)
	}
}
