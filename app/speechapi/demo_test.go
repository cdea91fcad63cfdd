package speechapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/audio/decode"
	"proscenium/engine/drama3"
	"proscenium/engine/open"
)

// demoEngine is the demo checkpoint (make-tiny) opened once on the CPU
// backend — the engine `proscenium serve --model` runs — shared by the
// tests (its takes run one at a time).
var demoEngine = sync.OnceValues(func() (api.Engine, error) {
	path, err := drama3.FindBaseTokenizer()
	if err != nil {
		return nil, err
	}
	base, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "proscenium-speechapi-demo-")
	if err != nil {
		return nil, err
	}
	demoDir = dir
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 7, BaseTokenizer: base}); err != nil {
		return nil, err
	}
	return open.Open(context.Background(), dir, open.Options{Backend: open.CPU})
})

var demoDir string // removed by TestMain

func TestMain(m *testing.M) {
	decode.ServeWorkerIfAsked() // recordings decoded in a child, as the programs do
	code := m.Run()
	if demoDir != "" {
		os.RemoveAll(demoDir)
	}
	os.Exit(code)
}

func openDemo(t *testing.T) api.Engine {
	t.Helper()
	eng, err := demoEngine()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("demo checkpoint: %v", err)
		}
		t.Skipf("demo checkpoint: %v (run make deps)", err)
	}
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

	wav := post(t, srv, req+`,"response_format":"wav"}`)
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

// interceptedEngine runs takes on a real engine and lets a test step in:
// hold a take before it starts, fail it after some audio chunks, and see
// how it ended.
type interceptedEngine struct {
	api.Engine
	gate      chan struct{} // non-nil: each take waits for it (or its ctx)
	started   chan struct{} // non-nil: receives when a take reaches the engine
	failAfter int           // > 0: fail the take after this many audio chunks
	finished  chan *api.Finish
}

var errInjected = errors.New("injected fault after the first chunk")

func (e *interceptedEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	if e.started != nil {
		e.started <- struct{}{}
	}
	if e.gate != nil {
		select {
		case <-e.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := 0
	fin, err := e.Engine.Synthesize(ctx, req, func(ev api.Event) {
		if ev.Kind == api.EventAudio {
			if e.failAfter > 0 && chunks >= e.failAfter {
				cancel()
				return
			}
			chunks++
		}
		emit(ev)
	})
	if e.failAfter > 0 && chunks >= e.failAfter && err == nil {
		err = errInjected
	}
	if e.finished != nil && fin != nil {
		e.finished <- fin
	}
	return fin, err
}

// A fault after the first chunk of a demo-model stream: the client got the
// chunk, then the connection ended without the terminating chunk.
func TestDemoModelStreamFault(t *testing.T) {
	srv := serve(t, &interceptedEngine{Engine: openDemo(t), failAfter: 1}, DefaultLimits())
	resp := post(t, srv, `{"model":"drama-3","input":"Hello.","response_format":"pcm","stream":true,"max_frames":30}`)
	got, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("a failed stream read as complete (%d bytes)", len(got))
	}
	if len(got) != 2048*2 { // the first chunk is one frame of PCM16
		t.Errorf("got %d bytes before the fault, want the first frame's %d", len(got), 2048*2)
	}
	if r := resp.Trailer.Get("X-Finish-Reason"); r != "" {
		t.Errorf("a failed stream carried finish reason %q", r)
	}
}

// A client that leaves mid-stream stops the demo-model take: it ends with
// reason cancel long before its frame budget.
func TestDemoModelDisconnectCancelsTake(t *testing.T) {
	eng := &interceptedEngine{Engine: openDemo(t), finished: make(chan *api.Finish, 1)}
	srv := serve(t, eng, DefaultLimits())
	resp := post(t, srv, `{"model":"drama-3","input":"Hello.","response_format":"pcm","stream":true,"max_frames":5000,"top_k":1}`)
	buf := make([]byte, 2048*2)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case fin := <-eng.finished:
		if fin.Reason != api.FinishCancel && fin.Reason != api.FinishStop {
			t.Errorf("the take ended with %q after the client left", fin.Reason)
		}
		if fin.Reason == api.FinishCancel && fin.Frames >= 5000 {
			t.Errorf("the take ran all %d frames", fin.Frames)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the take went on after the client left")
	}
}

// While a demo-model take runs and one request waits, a third is refused
// with 429; the waiting one is then served.
func TestDemoModelQueueFull(t *testing.T) {
	lim := DefaultLimits()
	lim.QueueDepth = 1
	eng := &interceptedEngine{Engine: openDemo(t), gate: make(chan struct{}), started: make(chan struct{}, 2)}
	srv, h := serveHandler(t, eng, lim)
	body := `{"model":"drama-3","input":"Hello.","response_format":"pcm","max_frames":3}`
	statuses := make(chan int, 2)
	for i := 0; i < 2; i++ {
		go func() {
			resp, err := http.Post(srv.URL+"/v1/audio/speech", "application/json", strings.NewReader(body))
			if err != nil {
				statuses <- -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	<-eng.started
	for deadline := time.Now().Add(10 * time.Second); len(h.q.slots) < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	resp := post(t, srv, body)
	if resp.StatusCode != 429 {
		t.Errorf("third request: %d, want 429", resp.StatusCode)
	}
	close(eng.gate)
	for i := 0; i < 2; i++ {
		if s := <-statuses; s != 200 {
			t.Errorf("queued request got %d", s)
		}
	}
}

// The request checks hold in front of the real engine too.
func TestDemoModelBadRequests(t *testing.T) {
	srv := serve(t, openDemo(t), DefaultLimits())
	for _, c := range []struct{ body, says string }{
		{`{"model":"drama-3","input":"hi","colour":"red"}`, `unknown field "colour"`},
		{`{"model":"drama-3","input":"hi","response_format":"ogg"}`, `"ogg"`},
		{`{"model":"drama-3","input":"hi","speed":5}`, "[0.25, 4], got 5"},
		{`{"model":"drama-3","input":" "}`, "empty"},
		{`{"model":"drama-3","input":"` + strings.Repeat("a", 4097) + `"}`, "limit is 4096"},
	} {
		resp := post(t, srv, c.body)
		var e struct{ Error struct{ Message string } }
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != 400 || !strings.Contains(e.Error.Message, c.says) {
			t.Errorf("%.50s: %d %q", c.body, resp.StatusCode, e.Error.Message)
		}
	}
	big := post(t, srv, `{"model":"drama-3","input":"`+strings.Repeat("a", 70<<10)+`"}`)
	if big.StatusCode != 413 {
		t.Errorf("70 KiB body: %d, want 413", big.StatusCode)
	}
}
