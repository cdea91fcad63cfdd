package app

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"proscenium/app/voicelib"
	"proscenium/engine/demo"
)

// encodingEngine encodes references itself (as the GPU worker's engine
// does), here with the CPU encoder, counting the calls; fail makes it refuse.
type encodingEngine struct {
	testEngine
	enc *voicelib.CPUEncoder

	mu    sync.Mutex
	calls int
	fail  bool
}

func (e *encodingEngine) EncodeReference(samples []float32) ([]int32, int, error) {
	e.mu.Lock()
	e.calls++
	fail := e.fail
	e.mu.Unlock()
	if fail {
		return nil, 0, errors.New("engine worker not running")
	}
	return e.enc.EncodeReference(samples)
}

// An engine that encodes references encodes them (the voice library and
// the speech API's references); when it cannot, the CPU encoder of the same
// codec does, with the same codes.
func TestEngineEncodesReferences(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "engine", "audio", "decode", "testdata", "ref.flac"))
	if err != nil {
		t.Fatal(err)
	}
	cpuEnc, err := voicelib.LoadCPUEncoderBytes(demo.CodecPTH, "demo codec.pth")
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpuEnc.EncodeRecording(rec)
	if err != nil {
		t.Fatal(err)
	}
	eng := &encodingEngine{testEngine: testEngine{frames: 1}, enc: cpuEnc}
	svc := voiceService(t, eng)
	for _, fail := range []bool{false, true} {
		eng.mu.Lock()
		eng.fail, eng.calls = fail, 0
		eng.mu.Unlock()
		got, err := svc.EncodeReference(rec)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("engine failing %v: %d frames, %v; want the CPU encoder's %d frames", fail, len(got), err, len(want))
		}
		if eng.calls != 1 {
			t.Errorf("engine failing %v: the engine was asked %d times, want once", fail, eng.calls)
		}
	}
	eng.fail = false
	voices, err := svc.CreateVoice("Ada", "The quick brown fox.", rec)
	if err != nil || len(voices) != 1 {
		t.Fatalf("create voice: %v %v", voices, err)
	}
	refs, err := svc.VoiceReferences(voices[0])
	if err != nil || len(refs) != 1 || !reflect.DeepEqual(refs[0].Codes, want) {
		t.Fatalf("the voice's codes: %v", err)
	}
	if voices[0].Reference == "" || eng.calls != 2 {
		t.Errorf("the voice was not encoded by the engine (%d calls)", eng.calls)
	}
}
