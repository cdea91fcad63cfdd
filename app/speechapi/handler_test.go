package speechapi

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"proscenium/engine/api"
	"proscenium/internal/jsonunits"
)

// fakeEngine is a deterministic stand-in whose samples the tests compute
// independently (byte-exact expectations for the encodings and the stream).
// The demo-model tests in demo_test.go run the real engine: faults,
// disconnects and the queue.
type fakeEngine struct {
	last      api.SpeechRequest // the last request (tests run takes one at a time)
	frames    int               // frames per take
	failAfter int               // >0: return an error after this many chunks
	skipFrame bool              // leave a one-frame gap after the first chunk (an engine bug)
	emitted   [][]float32       // the PCM of every chunk of the last take
}

const fakeSPF = 16 // samples per frame of the fake engine

func (f *fakeEngine) Info() api.Info {
	return api.Info{Model: "fake", Backend: "fake", SampleRate: 44100, SamplesPerFrame: fakeSPF, Codebooks: 10}
}
func (f *fakeEngine) Stats() api.Stats { return api.Stats{} }
func (f *fakeEngine) Close() error     { return nil }

func fakeSample(seed uint64, i int) float32 {
	return float32(math.Sin(float64(i)*0.01*float64(seed%7+1))) * 0.9
}

func (f *fakeEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	f.last, f.emitted = req, nil
	n := min(f.frames, req.MaxFrames)
	chunks := 0
	for from := 0; from < n; {
		if ctx.Err() != nil {
			return &api.Finish{Reason: api.FinishCancel, Frames: from}, nil
		}
		to := min(n, from+1+chunks) // 1 frame, then growing groups
		pcm := make([]float32, (to-from)*fakeSPF)
		for i := range pcm {
			pcm[i] = fakeSample(req.Seed, from*fakeSPF+i)
		}
		f.emitted = append(f.emitted, pcm)
		emit(api.Event{Kind: api.EventAudio, Audio: &api.AudioChunk{FromFrame: from, ToFrame: to, PCM: pcm}})
		chunks++
		if f.failAfter > 0 && chunks >= f.failAfter {
			return nil, errors.New("injected fault")
		}
		from = to
		if f.skipFrame && chunks == 1 {
			from++
		}
	}
	reason := api.FinishStop
	if n == req.MaxFrames {
		reason = api.FinishLength
	}
	return &api.Finish{Reason: reason, Frames: n, TimeToFirstAudioMs: 3, RealTimeFactor: 0.25}, nil
}

func serve(t *testing.T, eng api.Engine, lim Limits) *httptest.Server {
	srv, _ := serveHandler(t, eng, lim)
	return srv
}

func serveHandler(t *testing.T, eng api.Engine, lim Limits) (*httptest.Server, *Handler) {
	t.Helper()
	mux := http.NewServeMux()
	h := New(func() (api.Engine, error) {
		if eng == nil {
			return nil, errors.New("no model loaded")
		}
		return eng, nil
	}, "drama-3", lim)
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, h
}

func post(t *testing.T, srv *httptest.Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(srv.URL+"/v1/audio/speech", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func wantPCM16(seed uint64, samples int) []byte {
	out := make([]byte, 2*samples)
	for i := 0; i < samples; i++ {
		v := fakeSample(seed, i)
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(math.RoundToEven(float64(v)*32767))))
	}
	return out
}

func TestWholeReplies(t *testing.T) {
	srv := serve(t, &fakeEngine{frames: 9}, DefaultLimits())
	resp := post(t, srv, `{"model":"drama-3","input":"Hello there.","response_format":"pcm","seed":3}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "audio/pcm;rate=44100;channels=1;format=s16le" {
		t.Errorf("Content-Type %q", ct)
	}
	if got := resp.Header.Get("X-Finish-Reason"); got != "stop" {
		t.Errorf("X-Finish-Reason %q", got)
	}
	if resp.Header.Get("X-Time-To-First-Audio-Ms") != "3.0" || resp.Header.Get("X-Real-Time-Factor") != "0.2500" {
		t.Errorf("timing headers %v", resp.Header)
	}
	if !bytes.Equal(body, wantPCM16(3, 9*fakeSPF)) {
		t.Errorf("pcm body differs from the take (%d bytes)", len(body))
	}

	resp = post(t, srv, `{"model":"drama-3","input":"Hello there.","seed":3,"max_frames":4,"response_format":"wav"}`)
	wav, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/wav" {
		t.Fatalf("wav: status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), wav)
	}
	if got := resp.Header.Get("X-Finish-Reason"); got != "length" {
		t.Errorf("X-Finish-Reason %q, want length", got)
	}
	if len(wav) < 44 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		t.Fatalf("not a WAV file")
	}
	if rate := binary.LittleEndian.Uint32(wav[24:]); rate != 44100 {
		t.Errorf("WAV rate %d", rate)
	}
	if !bytes.Equal(wav[44:], wantPCM16(3, 4*fakeSPF)) {
		t.Errorf("WAV samples differ from the take")
	}
}

func TestStreamEqualsWhole(t *testing.T) {
	srv := serve(t, &fakeEngine{frames: 20}, DefaultLimits())
	whole := post(t, srv, `{"model":"drama-3","input":"x","response_format":"pcm","seed":5}`)
	want, _ := io.ReadAll(whole.Body)

	resp := post(t, srv, `{"model":"drama-3","input":"x","response_format":"pcm","seed":5,"stream":true}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("not chunked: %v", resp.TransferEncoding)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("stream (%d bytes) differs from the whole reply (%d bytes)", len(got), len(want))
	}
	if r := resp.Trailer.Get("X-Finish-Reason"); r != "stop" {
		t.Errorf("trailer X-Finish-Reason %q (trailers %v)", r, resp.Trailer)
	}
}

func TestFaultBeforeAudioIsAnError(t *testing.T) {
	srv := serve(t, &fakeEngine{frames: 20, failAfter: 1}, DefaultLimits())
	resp := post(t, srv, `{"model":"drama-3","input":"x","response_format":"pcm"}`)
	if resp.StatusCode != 500 {
		t.Errorf("status %d, want 500", resp.StatusCode)
	}
}

// Chunks that do not tile the take (an engine fault) are an error, never a
// panic and never audio served as if it were whole.
func TestChunkGapIsAnError(t *testing.T) {
	srv := serve(t, &fakeEngine{frames: 20, skipFrame: true}, DefaultLimits())
	resp := post(t, srv, `{"model":"drama-3","input":"x","response_format":"pcm"}`)
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(string(msg), "frames 2..") {
		t.Errorf("whole: %d %s", resp.StatusCode, msg)
	}
	resp = post(t, srv, `{"model":"drama-3","input":"x","response_format":"pcm","stream":true}`)
	if got, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("stream with a gap read as complete (%d bytes)", len(got))
	}
}

func TestBadRequests(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxInputChars = 10
	lim.MaxBodyBytes = 300
	srv := serve(t, &fakeEngine{frames: 2}, lim)
	cases := []struct {
		body   string
		status int
		param  string
		says   string
	}{
		{`{"model":"drama-3","input":"hi","colour":"red"}`, 400, "colour", `unknown field "colour"`},
		{`{"model":"drama-3","input":"hi","response_format":"ogg"}`, 400, "response_format", `"mp3", "opus", "aac", "flac", "wav", "pcm"`},
		{`{"model":"drama-3","input":"hi","speed":4.5}`, 400, "speed", "[0.25, 4]"},
		{`{"model":"drama-3","input":"hi","sample_rate":8000}`, 400, "sample_rate", "[44100 48000 24000 22050 16000]"},
		{`{"model":"drama-3","input":"hi","stream_format":"ws"}`, 400, "stream_format", `"sse"`},
		{`{"model":"drama-3","input":"hi","stream":false,"stream_format":"sse"}`, 400, "stream", "leave one out"},
		{`{"model":"drama-3","input":"hi","instructions":"loud] [soft"}`, 400, "instructions", "[ or ]"},
		{`{"model":"drama-3","input":"hi","instructions":"<|im_end|>"}`, 400, "instructions", "structural"},
		{`{"model":"drama-3","input":"hi","voice":"bob"}`, 400, "voice", `"default"`},
		{`{"model":"drama-3","input":"hi","voice":{"name":"x"}}`, 400, "voice", `{"id": name}`},
		{`{"model":"drama-3","input":"hi","speaker":"bob"}`, 400, "speaker", `unknown voice "bob"`},
		{`{"model":"drama-3","input":"hi","speaker":"default","voice":"default"}`, 400, "speaker", "not both"},
		{`{"model":"drama-3","input":"hi","max_new_tokens":0}`, 400, "max_new_tokens", "max_new_tokens"},
		{`{"model":"drama-3","input":"hi","max_new_tokens":5,"max_frames":5}`, 400, "max_new_tokens", "not both"},
		{`{"model":"drama-3","input":"hi","top_p":1e-50}`, 400, "top_p", "too small"},
		{`{"model":"drama-3","input":"hi","temperature":1e-50}`, 400, "temperature", "too small"},
		{`{"model":"drama-3","input":"hi","temperature":1e300}`, 400, "temperature", "too large"},
		{`{"model":"drama-3","input":"   "}`, 400, "input", "empty"},
		{`{"model":"drama-3"}`, 400, "input", "required"},
		{`{"model":"drama-3","input":"hello world, again"}`, 400, "input", "limit is 10"},
		{`{"model":"tts-2","input":"hi"}`, 400, "model", `"drama-3", "fishaudio/drama-3", "tts-1", "tts-1-hd", "gpt-4o-mini-tts"`},
		{`{"input":"hi"}`, 400, "model", "required"},
		{`{"model":"drama-3","input":"hi","top_p":0}`, 400, "top_p", "(0, 1]"},
		{`{"model":"drama-3","input":"hi","top_k":-1}`, 400, "top_k", "top_k"},
		{`{"model":"drama-3","input":"hi","temperature":-1}`, 400, "temperature", "temperature"},
		{`{"model":"drama-3","input":"hi","max_frames":0}`, 400, "max_frames", "max_frames"},
		{`{"model":"drama-3","input":7}`, 400, "input", `"input" must be a string, got a number`},
		{`{"model":"drama-3","input":"hi","temperature":"hot"}`, 400, "temperature", `"temperature" must be a number, got a string`},
		{`{"model":"drama-3","input":"hi","max_frames":1.5}`, 400, "max_frames", `"max_frames" must be a whole number, got a number 1.5`},
		{`{"model":"drama-3","input":"hi","stream":"yes"}`, 400, "stream", `"stream" must be true or false, got a string`},
		{`{"model":"drama-3","input":"hi","seed":-4}`, 400, "seed", `"seed" must be a whole number ≥ 0, got a number -4`},
		{`{"model":"drama-3","input":"hi"} {}`, 400, "", "exactly one"},
		{`{"model":`, 400, "", "cut short"},
		{``, 400, "", "empty"},
		{`{"model":"drama-3","input":"` + strings.Repeat("a", 400) + `"}`, 413, "", "larger than 300"},
	}
	for _, c := range cases {
		resp := post(t, srv, c.body)
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Param   *string `json:"param"`
			} `json:"error"`
		}
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Errorf("%.60s: reply is not a JSON error: %s", c.body, raw)
			continue
		}
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if resp.StatusCode != c.status || param != c.param || !strings.Contains(e.Error.Message, c.says) {
			t.Errorf("%.60s: got %d param %q %q; want %d param %q containing %q",
				c.body, resp.StatusCode, param, e.Error.Message, c.status, c.param, c.says)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	srv := serve(t, &fakeEngine{frames: 1}, DefaultLimits())
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	json.Unmarshal(body, &models)
	// created is OpenAI's (Unix seconds, 0 here)
	if problems, err := jsonunits.CheckDecoded(body, "created"); err != nil || len(problems) > 0 || !strings.Contains(string(body), `"sample_rate_hz":44100`) {
		t.Errorf("models %s: %v %v", body, problems, err)
	}
	if len(models.Data) != 5 || models.Data[0].ID != "drama-3" || models.Data[2].ID != "tts-1" {
		t.Errorf("models = %+v", models)
	}
	resp, err = http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, resp)
	}
	resp.Body.Close()

	none := serve(t, nil, DefaultLimits())
	r := post(t, none, `{"model":"drama-3","input":"hi"}`)
	msg, _ := io.ReadAll(r.Body)
	if r.StatusCode != 503 || !strings.Contains(string(msg), "no model loaded") {
		t.Errorf("no engine: %d %s", r.StatusCode, msg)
	}
}

// A path or method the API does not serve gets an OpenAI-style error (the
// mux's own 404 and 405 are plain text), 405 with Allow; the routes still
// answer, and a HEAD of a GET route is not refused.
func TestUnroutedRequests(t *testing.T) {
	srv := serve(t, &fakeEngine{frames: 1}, DefaultLimits())
	for _, c := range []struct {
		method, path string
		status       int
		allow, msg   string
	}{
		{"GET", "/v1/audio/speech", 405, "POST", "/v1/audio/speech takes POST, not GET"},
		{"PUT", "/v1/audio/speech", 405, "POST", "takes POST, not PUT"},
		{"DELETE", "/v1/models", 405, "GET, HEAD", "/v1/models takes GET or HEAD, not DELETE"},
		{"DELETE", "/v1/audio/voices", 405, "GET, POST, HEAD", "takes GET, POST or HEAD, not DELETE"},
		{"GET", "/v1/audio/transcriptions", 404, "", "no endpoint /v1/audio/transcriptions: this server answers POST /v1/audio/speech, GET /v1/audio/voices, POST /v1/audio/voices, GET /v1/models"},
		{"POST", "/v1/", 404, "", "no endpoint /v1/"},
		{"GET", "/v1/models", 200, "", ""},
		{"HEAD", "/v1/models", 200, "", ""},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(""))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		allow := resp.Header.Get("Allow")
		status, _, msg := apiErr(t, resp)
		if status != c.status || allow != c.allow || !strings.Contains(msg, c.msg) {
			t.Errorf("%s %s: %d Allow %q %q, want %d Allow %q %q", c.method, c.path, status, allow, msg, c.status, c.allow, c.msg)
		}
	}
}

// The routes share serve's mux with the studio's "GET /" (a registration
// that conflicts with it panics).
func TestRegisterBesideTheStudio(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("studio")) })
	New(func() (api.Engine, error) { return nil, errors.New("no model") }, "drama-3", DefaultLimits()).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/index.html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "studio" {
		t.Errorf("GET /index.html beside the API: %q", body)
	}
}
