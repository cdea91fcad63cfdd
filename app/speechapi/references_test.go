package speechapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/voicelib"
)

func testRecording(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "engine", "audio", "decode", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// demoRefEncoder encodes with the demo model's codec, as the service does.
func demoRefEncoder(t *testing.T) ReferenceEncoder {
	t.Helper()
	enc, err := voicelib.LoadCPUEncoder(filepath.Join(demoDir, "codec.pth"))
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeRecording
}

// SGLang-Omni's ref_audio + ref_text and references: [{audio, text}] clone
// a voice per request on the demo model: the same seed gives the same
// bytes either way, and the reference changes the take.
func TestDemoModelReferences(t *testing.T) {
	eng := openDemo(t)
	srv, h := serveHandler(t, eng, DefaultLimits())
	h.WithReferences(demoRefEncoder(t))
	mp3 := base64.StdEncoding.EncodeToString(testRecording(t, "ref.mp3"))
	base := `{"model":"drama-3","input":"Cloned.","seed":4,"max_frames":6,"response_format":"pcm"`
	read := func(body string) []byte {
		resp := postURL(t, srv.URL, body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d: %s", resp.StatusCode, b)
		}
		return b
	}
	a := read(base + `,"ref_audio":"` + mp3 + `","ref_text":"The quick brown fox."}`)
	b := read(base + `,"references":[{"audio":"data:audio/mpeg;base64,` + mp3 + `","text":"The quick brown fox."}]}`)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("ref_audio and references gave different takes (%d, %d bytes)", len(a), len(b))
	}
	if bytes.Equal(a, read(base+`}`)) {
		t.Error("the reference changed nothing")
	}
}

// Reference mistakes are 400s naming the field, too much audio a 413, and a
// server without an encoder refuses references.
func TestReferenceRefusals(t *testing.T) {
	calls := 0
	enc := func(rec []byte) ([][]int, error) {
		calls++
		if string(rec) == "bad" {
			return nil, errors.New("not a WAV, FLAC, MP3 or Ogg Opus file")
		}
		return [][]int{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, nil
	}
	lim := DefaultLimits()
	lim.MaxReferences = 2
	lim.MaxReferenceBytes = 1000
	srv, h := serveHandler(t, &fakeEngine{}, lim)
	h.WithReferences(enc)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	base := `{"model":"drama-3","input":"Hi."`
	for _, tc := range []struct {
		body   string
		status int
		param  string
		want   string
	}{
		{base + `,"ref_audio":"` + b64("x") + `"}`, 400, "ref_text", "ref_audio needs ref_text"},
		{base + `,"ref_text":"hi"}`, 400, "ref_audio", "ref_text needs ref_audio"},
		{base + `,"ref_audio":"%%%","ref_text":"hi"}`, 400, "ref_audio", "not base64"},
		{base + `,"ref_audio":"data:audio/wav,abc","ref_text":"hi"}`, 400, "ref_audio", "data:<type>;base64"},
		{base + `,"ref_audio":"` + b64("x") + `","ref_text":"  "}`, 400, "ref_text", "transcript of ref_audio is empty"},
		{base + `,"references":[{"audio":"` + b64("x") + `"}]}`, 400, "references[0]", "needs audio"},
		{base + `,"references":[{"audio":"` + b64("x") + `","text":""}]}`, 400, "references[0].text", "is empty"},
		{base + `,"ref_audio":"` + b64("x") + `","ref_text":"a","references":[{"audio":"` + b64("y") + `","text":"b"},{"audio":"` + b64("z") + `","text":"c"}]}`, 400, "references", "3 references, at most 2"},
		{base + `,"ref_audio":"` + b64(strings.Repeat("x", 1001)) + `","ref_text":"a"}`, 413, "ref_audio", "more than 1000 bytes together"},
		{base + `,"ref_audio":"` + b64("bad") + `","ref_text":"a"}`, 400, "ref_audio", "ref_audio: not a WAV"},
		{base + `,"input":"` + strings.Repeat("a", 65<<10) + `"}`, 413, "", "only reference recordings may make it larger"},
	} {
		resp := postURL(t, srv.URL, tc.body)
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Param   *string `json:"param"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if resp.StatusCode != tc.status || param != tc.param || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%.90s: %d %q %q, want %d %q %q", tc.body, resp.StatusCode, param, e.Error.Message, tc.status, tc.param, tc.want)
		}
	}
	ok := postURL(t, srv.URL, base+`,"ref_audio":"`+b64("x")+`","ref_text":"a"}`)
	if ok.StatusCode != 200 || calls == 0 {
		t.Errorf("a good reference: %d", ok.StatusCode)
	}

	plain := serve(t, &fakeEngine{}, DefaultLimits())
	resp := postURL(t, plain.URL, base+`,"ref_audio":"`+b64("x")+`","ref_text":"a"}`)
	if msg, _ := io.ReadAll(resp.Body); resp.StatusCode != 400 || !strings.Contains(string(msg), "does not take reference recordings") {
		t.Errorf("no encoder: %d %s", resp.StatusCode, msg)
	}
}
