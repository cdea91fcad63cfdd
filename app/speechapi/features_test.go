package speechapi

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"proscenium/app/voice"
	"proscenium/engine/api"
	"proscenium/engine/audio/resample"
	"proscenium/engine/audio/stretch"
	"proscenium/internal/jsonunits"
)

func serveVoices(t *testing.T, eng *fakeEngine, voices []voice.Voice) string {
	t.Helper()
	srv, h := serveHandler(t, eng, DefaultLimits())
	h.WithVoices(func() []voice.Voice { return voices })
	return srv.URL
}

func postURL(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/audio/speech", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// OpenAI's documentation example (tts-1, alloy, no response_format) gets an
// mp3, and every format its registered type, whole or streamed.
func TestFormatsAndDefaults(t *testing.T) {
	url := serveVoices(t, &fakeEngine{frames: 40}, nil)
	resp := postURL(t, url, `{"model":"tts-1","voice":"alloy","input":"Today is a wonderful day."}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" || resp.Header.Get("X-Voice") != "default" {
		t.Fatalf("doc example: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if len(body) < 4 || !(body[0] == 0xFF && body[1]&0xE0 == 0xE0) { // an MPEG audio frame sync
		t.Fatalf("not an mp3 stream: % x", body[:min(8, len(body))])
	}
	for format, ct := range map[string]string{
		"mp3": "audio/mpeg", "opus": "audio/ogg; codecs=opus", "aac": "audio/aac", "flac": "audio/flac",
		"wav": "audio/wav", "pcm": "audio/pcm;rate=24000;channels=1;format=s16le",
	} {
		for _, stream := range []string{"", `,"stream_format":"audio"`} {
			resp := postURL(t, url, `{"model":"drama-3","input":"x","sample_rate":24000,"response_format":"`+format+`"`+stream+`}`)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || len(b) == 0 {
				t.Errorf("%s%s: %d %q, %d bytes", format, stream, resp.StatusCode, resp.Header.Get("Content-Type"), len(b))
			}
		}
	}
}

// sse events carry, base64-encoded, exactly the bytes of the audio stream,
// then speech.audio.done with the usage and the finish reason.
func TestSSEMatchesAudioStream(t *testing.T) {
	srv, h := serveHandler(t, &fakeEngine{frames: 30}, DefaultLimits())
	h.WithTokenCounter(func(text string) (int, error) { return len(strings.Fields(text)), nil })
	url := srv.URL
	for _, format := range []string{"pcm", "flac", "mp3"} {
		req := `{"model":"drama-3","input":"x","seed":4,"response_format":"` + format + `"`
		raw := postURL(t, url, req+`,"stream_format":"audio"}`)
		want, _ := io.ReadAll(raw.Body)
		resp := postURL(t, url, req+`,"stream_format":"sse"}`)
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		var got []byte
		var done map[string]any
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		deltas := 0
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev map[string]any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatal(err)
			}
			switch ev["type"] {
			case "speech.audio.delta":
				b, err := base64.StdEncoding.DecodeString(ev["audio"].(string))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, b...)
				deltas++
			case "speech.audio.done":
				done = ev
			}
		}
		if !bytes.Equal(got, want) || deltas < 1 || (format == "pcm" && deltas < 2) {
			t.Errorf("%s: %d bytes in %d events, audio stream %d bytes", format, len(got), deltas, len(want))
		}
		usage, _ := done["usage"].(map[string]any)
		if done == nil || usage["output_tokens"] != float64(30) || usage["input_tokens"] != float64(1) ||
			usage["total_tokens"] != float64(31) || done["finish_reason"] != "stop" || done["time_to_first_audio_ms"] != 3.0 {
			t.Errorf("%s: done event %v", format, done)
		}
		b, _ := json.Marshal(done)
		problems, err := jsonunits.CheckDecoded(b)
		for _, p := range problems {
			t.Errorf("%s: done event: %v", format, p)
		}
		if err != nil {
			t.Error(err)
		}
	}
}

// A user voice gives its speaker tag and direction before the script, its
// sampling and seed unless the request sets them; instructions follow as a
// direction; OpenAI names map to default unless defined; {"id": …} and
// SGLang's speaker read like voice.
func TestVoicesAndInstructions(t *testing.T) {
	two := 2
	eng := &fakeEngine{frames: 3}
	voices := []voice.Voice{
		{Name: "narrator", Speaker: &two, Direction: "calm", Sampling: api.Sampling{Temperature: 0.5, TopP: 0.7, TopK: 9}, Seed: 77},
		{Name: "nova", Direction: "bright", Sampling: api.DefaultSampling(), Seed: 5},
	}
	url := serveVoices(t, eng, voices)
	for _, c := range []struct {
		body, voice, text string
		seed              uint64
		topK              int
	}{
		{`"voice":"narrator"`, "narrator", "<|speaker:2|>[calm] Hello.", 77, 9},
		{`"voice":{"id":"narrator"},"seed":1,"top_k":3`, "narrator", "<|speaker:2|>[calm] Hello.", 1, 3},
		{`"speaker":"narrator","instructions":" slowly "`, "narrator", "<|speaker:2|>[calm] [slowly] Hello.", 77, 9},
		{`"voice":"alloy","instructions":"whispering"`, "default", "[whispering] Hello.", 0, 30},
		{`"voice":"nova"`, "nova", "[bright] Hello.", 5, 30},
		{``, "default", "Hello.", 0, 30},
	} {
		resp := postURL(t, url, `{"model":"drama-3","input":"Hello.","response_format":"pcm",`+strings.TrimPrefix(c.body+`,"max_frames":3}`, ","))
		io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("X-Voice") != c.voice || eng.last.Text != c.text ||
			eng.last.Seed != c.seed || eng.last.Sampling.TopK != c.topK {
			t.Errorf("%s: %d X-Voice %q, text %q seed %d top_k %d", c.body, resp.StatusCode, resp.Header.Get("X-Voice"),
				eng.last.Text, eng.last.Seed, eng.last.Sampling.TopK)
		}
	}

	resp, err := http.Get(url + "/v1/audio/voices")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data    []struct{ ID string }
		Aliases map[string]string `json:"openai_aliases"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	if len(list.Data) != 3 || list.Data[0].ID != "default" || list.Data[1].ID != "narrator" ||
		list.Aliases["nova"] != "nova" || list.Aliases["alloy"] != "default" {
		t.Errorf("voices %+v", list)
	}
}

// speed runs the stretch: a take at speed 2 has about half the samples, and
// they are the stretcher's output on the take's chunks (to the last bit of
// PCM16), with the take's level; sample_rate resamples likewise.
func TestSpeedAndRate(t *testing.T) {
	eng := &fakeEngine{frames: 400}
	url := serveVoices(t, eng, nil)
	pcm := func(body string) []int16 {
		resp := postURL(t, url, body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		out := make([]int16, len(b)/2)
		for i := range out {
			out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return out
	}
	// through runs the take's chunks through a stage as the API must.
	through := func(process func([]float32) ([]float32, error), flush func() ([]float32, error)) []float32 {
		var out []float32
		for _, c := range eng.emitted {
			o, err := process(c)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o...)
		}
		tail, err := flush()
		if err != nil {
			t.Fatal(err)
		}
		return append(out, tail...)
	}
	// same fails unless got is want as PCM16 (±1 for rounding) and keeps
	// the take's level (the fake's tone: amplitude 0.9, rms 0.64).
	same := func(what string, got []int16, want []float32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d samples, want %d", what, len(got), len(want))
		}
		var sq float64
		for i, g := range got {
			if w := float64(want[i]) * 32767; math.Abs(float64(g)-w) > 1 {
				t.Fatalf("%s: sample %d is %d, the stage's output %.1f", what, i, g, w)
			}
			sq += float64(g) * float64(g)
		}
		if rms := math.Sqrt(sq/float64(len(got))) / 32767; !(rms > 0.4 && rms < 0.7) {
			t.Fatalf("%s: rms %.3g, the take's is 0.64", what, rms)
		}
	}
	base := `{"model":"drama-3","input":"x","response_format":"pcm","max_frames":400`
	whole := pcm(base + `}`)
	if len(whole) != 400*fakeSPF {
		t.Fatalf("%d samples", len(whole))
	}
	got := pcm(base + `,"speed":2}`)
	if len(got) != len(whole)/2 {
		t.Errorf("speed 2: %d samples, want %d", len(got), len(whole)/2)
	}
	st, err := stretch.New(44100, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	same("speed 2", got, through(st.Process, st.Flush))

	got = pcm(base + `,"sample_rate":16000}`)
	if len(got) != (len(whole)*16000+22050)/44100 {
		t.Errorf("16 kHz: %d samples, want %d", len(got), (len(whole)*16000+22050)/44100)
	}
	rs, err := resample.New(44100, 16000)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	same("16 kHz", got, through(rs.Process, rs.Flush))
}

// A take that fails after its first audio ends an sse stream with an error
// event and without speech.audio.done, the connection cut short.
func TestSSEFaultMidway(t *testing.T) {
	url := serveVoices(t, &fakeEngine{frames: 30, failAfter: 3}, nil)
	resp := postURL(t, url, `{"model":"drama-3","input":"x","response_format":"pcm","stream_format":"sse"}`)
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Error("the cut stream read as complete")
	}
	if !strings.Contains(string(body), `"type":"error"`) || strings.Contains(string(body), "speech.audio.done") {
		t.Errorf("events: %s", body)
	}
}
