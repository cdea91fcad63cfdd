package cpu

import (
	"math"
	"strings"
	"testing"
)

// Streaming: Decode(codes, from, to) must give exactly samples
// [from·2048, to·2048) of the whole decode, bit for bit, whatever the chunking,
// over scratch buffers full of NaN.

// chunkPolicies returns chunk boundaries [b0=0, b1, …, nf] for each policy.
func chunkPolicies(nf int) map[string][]int {
	grow := func(first int, step int) []int {
		b := []int{0}
		for at := first; ; at += step {
			if at >= nf {
				return append(b, nf)
			}
			b = append(b, at)
		}
	}
	p := map[string][]int{
		"one frame at a time": grow(1, 1),
		"first frame then 4":  grow(1, 4),
		"first frame then 8":  grow(1, 8),
		"first frame then 16": grow(1, 16),
		"irregular":           {0},
	}
	for i, at := 0, 0; at < nf; i++ {
		at = min(nf, at+[]int{3, 1, 7, 2, 11, 5}[i%6])
		p["irregular"] = append(p["irregular"], at)
	}
	return p
}

func sameBits(a, b []float32) (int, bool) {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return -1, len(a) == len(b)
}

func TestCodecChunkedDecodeIsBitIdentical(t *testing.T) {
	for name, f := range loadCodecFixtures(t) {
		spf := f.codec.Geometry().SamplesPerFrame
		ws := &CodecScratch{poisonNew: true}
		whole := f.decoded(t).PCM
		for policy, bounds := range chunkPolicies(f.nf) {
			for k := 0; k+1 < len(bounds); k++ {
				from, to := bounds[k], bounds[k+1]
				ws.poison()
				got, err := f.codec.Decode(f.codes[:to*10], from, to, ws)
				if err != nil {
					t.Fatalf("%s %s [%d,%d): %v", name, policy, from, to, err)
				}
				if i, ok := sameBits(got, whole[from*spf:to*spf]); !ok {
					t.Fatalf("%s %s: chunk [%d,%d) differs from the whole decode at sample %d (%v vs %v)",
						name, policy, from, to, from*spf+i, got[max(i, 0)], whole[from*spf+max(i, 0)])
				}
			}
		}
	}
}

// TestCodecReceptiveFieldBoundary decodes tiny-w8 (window 8, 2 layers: the
// field is 2·7 + 10 = 24 frames) at chunks whose field just reaches frame 0
// and just no longer reaches it, and shows the field is tight: one frame less
// of history changes the output.
func TestCodecReceptiveFieldBoundary(t *testing.T) {
	f := loadCodecFixtures(t)["tiny-w8"]
	h := f.codec.Geometry().HistoryFrames
	spf := f.codec.Geometry().SamplesPerFrame
	if h != 24 || f.nf < h+4 {
		t.Fatalf("history %d frames, fixture %d frames", h, f.nf)
	}
	whole := f.decoded(t).PCM
	ws := &CodecScratch{poisonNew: true}
	for _, from := range []int{h - 1, h, h + 1, h + 2} {
		to := min(f.nf, from+3)
		ws.poison()
		if got := f.codec.stageStarts(from)[0]; got != max(0, from-h) {
			t.Errorf("from %d: first frame read %d, want %d", from, got, max(0, from-h))
		}
		// Codes before the field are not read: garbage there changes nothing.
		codes := append([]int32(nil), f.codes[:to*10]...)
		for i := 0; i < (from-h)*10; i++ {
			codes[i] = 4095
		}
		got, err := f.codec.Decode(codes, from, to, ws)
		if err != nil {
			t.Fatal(err)
		}
		if i, ok := sameBits(got, whole[from*spf:to*spf]); !ok {
			t.Errorf("chunk [%d,%d): differs from the whole decode at sample %d", from, to, from*spf+i)
		}
		if from < h {
			continue
		}
		// One frame less of history: the output must change (the field is not
		// larger than needed).
		short, err := f.codec.decode(f.codes[:to*10], from, to, from-h+1, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := sameBits(short, whole[from*spf:to*spf]); ok {
			t.Errorf("chunk [%d,%d): reading from frame %d instead of %d changed nothing: the field is overestimated", from, to, from-h+1, from-h)
		}
	}
}

func TestCodecOutOfRangeCodes(t *testing.T) {
	f := loadCodecFixtures(t)["tiny-w8"]
	g := f.codec.Geometry()
	nf := 6
	base := append([]int32(nil), f.codes[:nf*10]...)
	clamped := append([]int32(nil), base...)
	over := append([]int32(nil), base...)
	for fr := 0; fr < nf; fr += 2 { // every other frame fully out of range
		for i := 0; i < 10; i++ {
			max := int32(g.ResidualCodes - 1)
			if i == 0 {
				max = int32(g.SemanticCodes - 1)
			}
			clamped[fr*10+i] = max
			over[fr*10+i] = max + 1 + int32(fr*1000+i)
		}
	}
	over[0] = math.MaxInt32
	want, err := f.codec.Decode(clamped, 0, nf, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.codec.Decode(over, 0, nf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := sameBits(got, want); !ok {
		t.Errorf("codes above the last entry do not decode as the last entry (sample %d)", i)
	}
	plain, _ := f.codec.Decode(base, 0, nf, nil)
	if _, ok := sameBits(plain, want); ok {
		t.Errorf("clamping test is vacuous: clamped codes decode like the originals")
	}

	neg := append([]int32(nil), base...)
	neg[3*10+7] = -1
	if _, err := f.codec.Decode(neg, 4, 5, nil); err == nil || !strings.Contains(err.Error(), "frame 3 codebook 7") {
		t.Errorf("negative code: error %v, want one naming frame 3 codebook 7", err)
	}
	for _, tc := range []struct {
		codes    []int32
		from, to int
		want     string
	}{
		{base[:15], 0, 1, "whole number"},
		{base, 2, 2, "outside"},
		{base, -1, 2, "outside"},
		{base, 0, nf + 1, "outside"},
		{base, 0, 1 << 62, "outside"},
	} {
		if _, err := f.codec.Decode(tc.codes, tc.from, tc.to, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%d codes, %d, %d): error %v, want %q", len(tc.codes), tc.from, tc.to, err, tc.want)
		}
	}
}

func TestCodecStreamIsBitIdentical(t *testing.T) {
	for name, f := range loadCodecFixtures(t) {
		whole := f.decoded(t).PCM
		for policy, bounds := range chunkPolicies(f.nf) {
			s := f.codec.NewStream()
			s.ws.poisonNew = true
			var got []float32
			for k := 0; k+1 < len(bounds); k++ {
				s.ws.poison()
				pcm, err := s.Push(f.codes[bounds[k]*10 : bounds[k+1]*10])
				if err != nil {
					t.Fatalf("%s %s: %v", name, policy, err)
				}
				got = append(got, pcm...)
			}
			if i, ok := sameBits(got, whole); !ok {
				t.Errorf("%s %s: stream differs from the whole decode at sample %d", name, policy, i)
			}
			if s.Frames() != f.nf {
				t.Errorf("%s %s: %d frames", name, policy, s.Frames())
			}
		}
	}
}

func TestCodecStreamErrorsChangeNothing(t *testing.T) {
	f := loadCodecFixtures(t)["tiny-w8"]
	s := f.codec.NewStream()
	first, err := s.Push(f.codes[:20])
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]int32(nil), f.codes[20:40]...)
	bad[10+4] = -5
	if _, err := s.Push(bad); err == nil || !strings.Contains(err.Error(), "frame 3 codebook 4") {
		t.Errorf("negative code: error %v, want one naming frame 3 codebook 4", err)
	}
	if _, err := s.Push(f.codes[20:25]); err == nil {
		t.Error("half a frame accepted")
	}
	rest, err := s.Push(f.codes[20:60])
	if err != nil {
		t.Fatal(err)
	}
	whole := f.decoded(t).PCM
	if i, ok := sameBits(append(first, rest...), whole[:6*2048]); !ok {
		t.Errorf("after refused pushes the stream differs at sample %d", i)
	}
}

// CodecFrames, as the generation loop drives it (chunks in order, frames
// appended as they come), decodes through its stream; a range out of order
// takes the stateless decode; a new take starts a new stream. Every chunk is
// the whole decode's samples, bit for bit.
func TestCodecFramesStreamsInOrder(t *testing.T) {
	f := loadCodecFixtures(t)["tiny-w8"]
	g := f.codec.Geometry()
	entries := []int{g.SemanticCodes}
	for range g.Codebooks() - 1 {
		entries = append(entries, g.ResidualCodes)
	}
	d, err := NewCodecFrames(f.codec, entries)
	if err != nil {
		t.Fatal(err)
	}
	nb := g.Codebooks()
	frames := make([][]int, f.nf)
	for i := range frames {
		for _, c := range f.codes[i*nb : (i+1)*nb] {
			frames[i] = append(frames[i], int(c))
		}
	}
	whole := f.decoded(t).PCM
	spf := g.SamplesPerFrame
	check := func(what string, made, from, to int) { // made: the frames so far
		t.Helper()
		pcm, err := d.Decode(frames[:made], from, to)
		if err != nil {
			t.Fatalf("%s [%d, %d): %v", what, from, to, err)
		}
		if i, ok := sameBits(pcm, whole[from*spf:to*spf]); !ok {
			t.Fatalf("%s [%d, %d): differs from the whole decode at sample %d", what, from, to, i)
		}
	}
	for take := 0; take < 2; take++ {
		if take == 1 {
			d.Reset()
		}
		for _, b := range [][2]int{{0, 1}, {1, 3}, {3, 7}, {7, 15}} {
			check("in order", b[1], b[0], b[1])
		}
		if d.stream == nil || d.stream.Frames() != 15 {
			t.Fatalf("take %d: the in-order chunks did not go through the stream", take)
		}
	}
	check("out of order", 15, 2, 9)
	if d.stream.Frames() != 15 {
		t.Fatalf("an out-of-order range moved the stream to %d frames", d.stream.Frames())
	}
	check("in order after it", f.nf, 15, f.nf)
	check("a new take (fewer frames)", 4, 0, 4)
	if d.stream.Frames() != 4 {
		t.Fatalf("a new take's first chunk left the stream at %d frames, want 4", d.stream.Frames())
	}
}
