package cuda

import (
	"math"
	"strings"
	"testing"

	"proscenium/engine/sampling"
)

func TestFrameControlSettings(t *testing.T) {
	c, err := newFrameControl(sampling.Settings{Temperature: 0.7, TopP: 0.9, TopK: 30}, 0x1234567889abcdef, 11)
	if err != nil {
		t.Fatal(err)
	}
	if c[fcSeedLo] != 0x89abcdef || c[fcSeedHi] != 0x12345678 {
		t.Errorf("key words %#x %#x", c[fcSeedLo], c[fcSeedHi])
	}
	if math.Float32frombits(c[fcTemperature]) != 0.7 || math.Float32frombits(c[fcTopP]) != 0.9 || c[fcTopK] != 30 {
		t.Errorf("settings words %v", c[fcTemperature:fcFrame])
	}
	if c[fcPos] != 11 || c[fcFrame] != 0 || c[fcForced] != 0 {
		t.Errorf("counters pos %d frame %d forced %d", c[fcPos], c[fcFrame], c[fcForced])
	}
	if _, err := newFrameControl(sampling.Settings{Temperature: -1, TopP: 1}, 0, 0); err == nil {
		t.Error("negative temperature accepted")
	}
	if FrameResultOffset != 24*4 || FrameResultBytes != 18*4 {
		t.Errorf("result at %d, %d bytes: out of step with frame_control.cuh", FrameResultOffset, FrameResultBytes)
	}
}

func TestFrameResult(t *testing.T) {
	words := make([]uint32, FrameResultBytes/4)
	words[0], words[1] = 4096, 7
	words[fcEnd-fcCodes] = 1
	r := decodeFrameResult(words, 2)
	if r.Codes[0] != 4096 || r.Codes[1] != 7 || !r.End || r.Err() != nil {
		t.Fatalf("%+v", r)
	}
	words[fcError-fcCodes] = 1<<3 | frameErrKVFull
	err := decodeFrameResult(words, 2).Err()
	if err == nil || !strings.Contains(err.Error(), "codebook 3") || !strings.Contains(err.Error(), "KV cache") {
		t.Fatalf("error %v", err)
	}
}
