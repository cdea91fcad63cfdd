package decode

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"proscenium/engine/audio/decode/decodetest"
)

// TestFLACBombRefused: the attack of issue 32, a 12.6 KB valid FLAC
// declaring 655350 Hz and 8 channels, is refused from its declaration,
// naming the field, before a sample is decoded. (Before the budget it was
// decoded at the declared rate: 31 s of 8 channels at 655350 Hz, appended
// sample by sample, 3 GB.)
func TestFLACBombRefused(t *testing.T) {
	bomb := decodetest.FLACBomb(655350, 8, 0, 12600)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"rate", bomb, "sample rate of 655350 Hz, more than the limit of 192000 Hz"},
		{"channels", wavImageChannels(9), "channels of 9, more than the limit of 8"},
	} {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := Decode(tc.b, MaxReferenceSeconds+1)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		var le *LimitError
		if !errors.As(err, &le) || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *LimitError saying %q", tc.name, err, tc.want)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
			t.Errorf("%s: refusing it allocated %d bytes", tc.name, grew)
		}
		if _, err := ReadReference(tc.b); !errors.Is(err, ErrLimit) {
			t.Errorf("%s: ReadReference: %v, want ErrLimit", tc.name, err)
		}
	}
}

// TestFLACBombBudget: a 20 KB FLAC within the limits (192 kHz, 8 channels)
// that declares 2^36−1 frames and expands to minutes stops at the budget:
// what it allocates is the budget's samples and the decoder's frames, not
// the declaration nor the expansion.
func TestFLACBombBudget(t *testing.T) {
	bomb := decodetest.FLACBomb(MaxRate, MaxChannels, 1<<36-1, 20<<10)
	const seconds = 1.0
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := Decode(bomb, seconds)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLong) {
		t.Fatalf("%v, want ErrTooLong", err)
	}
	budget := uint64(seconds * MaxRate * MaxChannels * 4)
	// mewkiz/flac allocates each 65535-frame block's subframes (2 MiB) and
	// the budget's buffer is allocated once.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > budget+16<<20 {
		t.Errorf("decoding %g s allocated %d bytes, the budget is %d", seconds, grew, budget)
	}
	// Within the budget the same stream decodes whole, to its length.
	short := decodetest.FLACBomb(MaxRate, 2, 0, 200)
	p, f, err := Decode(short, 60)
	if err != nil || f != FLAC || p.Rate != MaxRate || p.Channels != 2 || p.Frames()%65535 != 0 || p.Frames() == 0 {
		t.Fatalf("short stream: %v, %+v", err, p)
	}
}

// wavImageChannels is a 16-bit WAV header of n channels at 44.1 kHz with
// one frame.
func wavImageChannels(n int) []byte {
	return wavImage(wavePCM, 16, n, 44100, false, make([]float64, n))
}

// FuzzReadReference: no input panics the reference reader; what it accepts
// is within the reference's limits, and no decode holds more samples than
// its budget (the FLAC bombs are seeds).
func FuzzReadReference(f *testing.F) {
	for _, name := range []string{"ref.wav", "ref.flac", "ref.mp3", "ref.opus"} {
		b := readTestdata(f, name)
		f.Add(b[:min(len(b), 4096)])
	}
	f.Add(decodetest.FLACBomb(655350, 8, 0, 600))
	f.Add(decodetest.FLACBomb(MaxRate, MaxChannels, 1<<36-1, 200))
	f.Add(decodetest.FLACBomb(22050, 1, 0, 4000))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, _, err := Decode(b, MaxReferenceSeconds+1); err == nil {
			limit := int(math.Ceil((MaxReferenceSeconds+1)*float64(p.Rate))) * p.Channels
			if p.Rate > MaxRate || p.Channels > MaxChannels || len(p.Samples) > limit || cap(p.Samples) > limit {
				t.Fatalf("%d Hz, %d channels: %d samples (capacity %d), budget %d", p.Rate, p.Channels, len(p.Samples), cap(p.Samples), limit)
			}
		}
		ref, err := readReferenceInProcess(b)
		if err != nil {
			return
		}
		if s := ref.Seconds(); s < MinReferenceSeconds || s > MaxReferenceSeconds+0.01 {
			t.Fatalf("accepted a reference of %g s", s)
		}
		if ref.SourceRate > MaxRate || ref.SourceChannels > MaxChannels {
			t.Fatalf("accepted %d Hz, %d channels", ref.SourceRate, ref.SourceChannels)
		}
	})
}
