package gpuworker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"proscenium/engine/api"
)

// The test binary doubles as the fake worker: started with GPUWORKER_FAKE set,
// it behaves as that mode says and exits.
func TestMain(m *testing.M) {
	if mode := os.Getenv("GPUWORKER_FAKE"); mode != "" {
		os.Exit(fakeWorker(mode))
	}
	os.Exit(m.Run())
}

func fakeWorker(mode string) int {
	switch mode {
	case "nodevice": // what gorgonia.org/cu prints in its init, then exits 1
		fmt.Printf("Error in initialization, please refer to %q for details on: %+v\n",
			"https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__INITIALIZE.html", "NoDevice")
		return 1
	case "silent":
		fmt.Fprintln(os.Stderr, "fatal: something broke")
		return 3
	case "hang":
		time.Sleep(time.Minute)
		return 0
	case "engine":
		if err := ServeEngine(os.Stdin, os.Stdout, Hello{PID: os.Getpid()}, openFake); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	hello := Hello{PID: os.Getpid(), Device: Device{Name: "Fake GPU", CCMajor: 9, Kernels: "sm_90 SASS"}}
	err := Serve(os.Stdin, os.Stdout, hello, func(ctx context.Context, req Request, out *Emitter) (any, error) {
		switch req.Op {
		case "echo":
			var s string
			json.Unmarshal(req.Args, &s)
			return s, nil
		case "fail":
			return nil, errors.New("no such model")
		case "panic":
			panic("boom")
		case "stream": // frames until cancelled or 5 done; PCM per frame
			n := 0
			for ; n < 5; n++ {
				select {
				case <-ctx.Done():
					return api.Finish{Reason: api.FinishCancel, Frames: n}, nil
				default:
				}
				out.Event(n + 1)
				out.PCM(api.AudioChunk{FromFrame: n, ToFrame: n + 1, PCM: []float32{float32(n), -0.5}})
				if mode == "slow" {
					time.Sleep(50 * time.Millisecond)
				}
			}
			return api.Finish{Reason: api.FinishStop, Frames: n}, nil
		case "stuck": // ignores its cancel
			time.Sleep(time.Minute)
			return nil, nil
		case "die":
			out.Event(1)
			fmt.Fprintln(os.Stderr, "CUDA error: an illegal memory access was encountered")
			os.Exit(7)
		}
		return nil, fmt.Errorf("unknown op %q", req.Op)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func start(t *testing.T, mode string, opt Options) (*Client, error) {
	t.Helper()
	opt.Env = append(opt.Env, "GPUWORKER_FAKE="+mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(context.Background(), exe, opt)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func TestFrameRoundTripAndBadFrames(t *testing.T) {
	var buf bytes.Buffer
	WriteFrame(&buf, FrameEvent, []byte(`{"id":1}`))
	WriteFrame(&buf, FrameCancel, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	for _, want := range []FrameType{FrameEvent, FrameCancel} {
		if ty, _, err := ReadFrame(&buf); err != nil || ty != want {
			t.Fatalf("ReadFrame = %v, %v; want %v", ty, err, want)
		}
	}
	if _, _, err := ReadFrame(&buf); err != io.EOF {
		t.Fatalf("end of stream: %v, want io.EOF", err)
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"zero length", []byte{0, 0, 0, 0, 1}, ErrFrame},
		{"length over the maximum", []byte{0xff, 0xff, 0xff, 0x7f, 1}, ErrFrame},
		{"unknown type", []byte{1, 0, 0, 0, 99}, ErrFrame},
		{"cut in the header", []byte{5, 0}, io.ErrUnexpectedEOF},
		{"cut in the payload", []byte{5, 0, 0, 0, 4, 'a'}, io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := ReadFrame(bytes.NewReader(c.data)); !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
	if err := WriteFrame(io.Discard, FramePCM, make([]byte, MaxFrame)); !errors.Is(err, ErrFrame) {
		t.Fatalf("oversize write: %v", err)
	}
}

func TestPCMRoundTrip(t *testing.T) {
	p := PCM{ID: 42, Chunk: api.AudioChunk{FromFrame: 3, ToFrame: 5, PCM: []float32{0.25, -1, 1e-7}}}
	q, err := DecodePCM(EncodePCM(p))
	if err != nil || q.ID != 42 || q.Chunk.FromFrame != 3 || q.Chunk.ToFrame != 5 || fmt.Sprint(q.Chunk.PCM) != fmt.Sprint(p.Chunk.PCM) {
		t.Fatalf("round trip: %+v, %v", q, err)
	}
	for _, bad := range [][]byte{make([]byte, 15), make([]byte, 18), EncodePCM(PCM{Chunk: api.AudioChunk{FromFrame: 4, ToFrame: 2}})} {
		if _, err := DecodePCM(bad); !errors.Is(err, ErrFrame) {
			t.Fatalf("DecodePCM(%d bytes) = %v", len(bad), err)
		}
	}
}

func TestWorkerRequests(t *testing.T) {
	c, err := start(t, "ok", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Hello(); h.Device.Name != "Fake GPU" || h.Protocol != ProtocolVersion || h.PID == 0 {
		t.Fatalf("hello %+v", h)
	}
	res, err := c.Call(context.Background(), "echo", "hi", nil, nil)
	if err != nil || string(res) != `"hi"` {
		t.Fatalf("echo: %s, %v", res, err)
	}
	var rerr *RemoteError
	if _, err := c.Call(context.Background(), "fail", nil, nil, nil); !errors.As(err, &rerr) || rerr.Message != "no such model" {
		t.Fatalf("fail: %v", err)
	}
	if _, err := c.Call(context.Background(), "panic", nil, nil, nil); !errors.As(err, &rerr) || !strings.Contains(rerr.Message, "boom") {
		t.Fatalf("panic: %v", err)
	}
	// Concurrent streams: each gets its own events and PCM, in order.
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var frames []int
			var chunks []api.AudioChunk
			res, err := c.Call(context.Background(), "stream", nil,
				func(e Event) { frames = append(frames, e.Frames) },
				func(p PCM) { chunks = append(chunks, p.Chunk) })
			var fin api.Finish
			if err != nil || json.Unmarshal(res, &fin) != nil || fin.Reason != api.FinishStop || fin.Frames != 5 {
				t.Errorf("stream: %s, %v", res, err)
				return
			}
			if fmt.Sprint(frames) != "[1 2 3 4 5]" || len(chunks) != 5 || chunks[4].FromFrame != 4 || chunks[4].PCM[0] != 4 {
				t.Errorf("stream events %v, chunks %v", frames, chunks)
			}
		}()
	}
	wg.Wait()
	if c.Err() != nil {
		t.Fatalf("worker ended: %v", c.Err())
	}
}

func TestCancelStopsTheTakeAndKeepsItsEnd(t *testing.T) {
	c, err := start(t, "slow", Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res, err := c.Call(ctx, "stream", nil, func(e Event) {
		if e.Frames == 2 {
			cancel()
		}
	}, nil)
	var fin api.Finish
	if err != nil || json.Unmarshal(res, &fin) != nil || fin.Reason != api.FinishCancel || fin.Frames < 2 || fin.Frames >= 5 {
		t.Fatalf("cancelled stream: %s, %v", res, err)
	}
}

// A worker that does not answer a cancel within the grace is ended: the next
// call must not queue behind its stuck request.
func TestStuckWorkerIsEndedAfterTheCancelGrace(t *testing.T) {
	c, err := start(t, "ok", Options{CancelGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Call(ctx, "stuck", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "was ended") {
		t.Fatalf("stuck call: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the stuck worker still runs")
	}
}

func TestWorkerThatCannotStartSaysWhy(t *testing.T) {
	cases := []struct{ mode, reason, detail string }{
		{"nodevice", "no CUDA-capable GPU found (cuInit: NoDevice)", "Error in initialization"},
		{"silent", "fatal: something broke", "fatal: something broke"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			_, err := start(t, c.mode, Options{})
			var ue *UnavailableError
			if !errors.As(err, &ue) || ue.Reason != c.reason || !strings.Contains(ue.Detail, c.detail) {
				t.Fatalf("error %#v", err)
			}
		})
	}
	t.Run("hang", func(t *testing.T) {
		_, err := start(t, "hang", Options{HelloTimeout: 300 * time.Millisecond})
		var ue *UnavailableError
		if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "no hello") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("missing binary", func(t *testing.T) {
		_, err := Start(context.Background(), filepath.Join(t.TempDir(), "proscenium-gpu"), Options{})
		var ue *UnavailableError
		if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "not found") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("locate: nowhere", func(t *testing.T) {
		t.Setenv(EnvWorker, "")
		t.Setenv("PATH", t.TempDir())
		exe, _ := os.Executable()
		want := "(looked in $" + EnvWorker + ", " + filepath.Dir(exe) + " (next to this program), $PATH)"
		if _, err := Locate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Locate: %v, want it to say %q", err, want)
		}
	})
	t.Run("locate via the environment", func(t *testing.T) {
		t.Setenv(EnvWorker, filepath.Join(t.TempDir(), "nothing"))
		if _, err := Locate(); err == nil || !strings.Contains(err.Error(), EnvWorker) {
			t.Fatalf("Locate: %v", err)
		}
	})
}

func TestDeadWorkerEndsTheCallAndIsRestarted(t *testing.T) {
	exe, _ := os.Executable()
	s := &Supervisor{Path: exe, Opt: Options{Env: []string{"GPUWORKER_FAKE=ok"}}}
	defer s.Close()
	c1, err := s.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	_, err = c1.Call(context.Background(), "die", nil, func(Event) { events++ }, nil)
	var died *WorkerDiedError
	if !errors.As(err, &died) || !strings.Contains(died.Status, "exit status 7") || !strings.Contains(died.Stderr, "illegal memory access") {
		t.Fatalf("call on a dying worker: %v", err)
	}
	if events != 1 {
		t.Fatalf("%d events before the death, want 1", events)
	}
	if _, err := c1.Call(context.Background(), "echo", "x", nil, nil); !errors.As(err, &died) {
		t.Fatalf("call after death: %v", err)
	}
	c2, err := s.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c1 || c2.Hello().PID == c1.Hello().PID {
		t.Fatal("the supervisor did not start a new worker")
	}
	if res, err := c2.Call(context.Background(), "echo", "again", nil, nil); err != nil || string(res) != `"again"` {
		t.Fatalf("restarted worker: %s, %v", res, err)
	}
}

// FuzzReadFrame: ReadFrame never accepts more than MaxFrame, and what it
// accepts is exactly what WriteFrame writes for it (likewise DecodePCM and
// EncodePCM): nothing is read that the writer could not have meant.
func FuzzReadFrame(f *testing.F) {
	var buf bytes.Buffer
	WriteFrame(&buf, FramePCM, EncodePCM(PCM{ID: 1, Chunk: api.AudioChunk{ToFrame: 1, PCM: []float32{1}}}))
	WriteFrame(&buf, FrameEvent, []byte(`{"id":1,"frames":2}`))
	f.Add(buf.Bytes())
	f.Add([]byte{2, 0, 0, 0, 6, '{'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			start := len(data) - r.Len()
			ty, b, err := ReadFrame(r)
			if err != nil {
				return
			}
			if len(b)+1 > MaxFrame {
				t.Fatalf("%d-byte payload", len(b))
			}
			var again bytes.Buffer
			if err := WriteFrame(&again, ty, b); err != nil {
				t.Fatalf("writing back a %s frame read: %v", ty, err)
			}
			if read := data[start : len(data)-r.Len()]; !bytes.Equal(again.Bytes(), read) {
				t.Fatalf("read % x, wrote back % x", read, again.Bytes())
			}
			if ty == FramePCM {
				if p, err := DecodePCM(b); err == nil {
					if back := EncodePCM(p); !bytes.Equal(back, b) {
						t.Fatalf("PCM payload % x encodes back as % x", b, back)
					}
				}
			}
		}
	})
}

func TestProbe(t *testing.T) {
	exe, _ := os.Executable()
	t.Setenv(EnvWorker, exe)
	t.Setenv("GPUWORKER_FAKE", "ok")
	if h, err := Probe(context.Background()); err != nil || h.Device.Name != "Fake GPU" {
		t.Fatalf("Probe = %+v, %v", h, err)
	}
	t.Setenv("GPUWORKER_FAKE", "nodevice")
	var ue *UnavailableError
	if _, err := Probe(context.Background()); !errors.As(err, &ue) || !strings.Contains(ue.Reason, "NoDevice") {
		t.Fatalf("Probe without a GPU: %v", err)
	}
}
