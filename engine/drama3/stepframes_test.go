package drama3

import (
	"context"
	"slices"
	"strings"
	"testing"

	"proscenium/engine/sampling"
)

// Teacher forcing uses the given codes for every draw (the tower sees them
// as the previous codes) and never ends the speech, while the logits tap
// still sees each draw's logits.
func TestStepFramesTeacherForcing(t *testing.T) {
	fake := newFake(0) // frame 0's semantic logits say end of speech
	f, err := NewStepFrames(fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	codes := make([]int, 4)
	if _, err := f.Frame(codes, nil); err == nil || !strings.Contains(err.Error(), "before Begin") {
		t.Fatalf("frame before Begin: error %v", err)
	}
	var tapped []int
	f.TapLogits(func(frame, cb int, l []float32) { tapped = append(tapped, cb) })
	if err := f.Begin(context.Background(), []int{1, 2}, sampling.Settings{Temperature: 1, TopP: 1}, 1); err != nil {
		t.Fatal(err)
	}
	forced := []int{5, 1, 2, 3}
	end, err := f.Frame(codes, forced)
	if err != nil || end || !slices.Equal(codes, forced) {
		t.Fatalf("forced frame: end %v, codes %v, err %v", end, codes, err)
	}
	if want := []string{"begin 2", "shared 5", "residual 1 5", "residual 2 1", "residual 3 2"}; !slices.Equal(fake.calls, want) {
		t.Fatalf("calls %v, want %v", fake.calls, want)
	}
	if !slices.Equal(tapped, []int{0, 1, 2, 3}) {
		t.Fatalf("tapped codebooks %v", tapped)
	}
	if _, err := f.Frame(codes, []int{16, 0, 0, 0}); err == nil || !strings.Contains(err.Error(), "outside codebook 0") {
		t.Fatalf("forced end-of-speech index: error %v", err)
	}
	if _, err := f.Decode(0, 2); err == nil {
		t.Fatal("decode past the frames made accepted")
	}
}

// Generate refuses a logits listener on a backend that cannot show logits.
func TestGenerateNeedsLogitsTap(t *testing.T) {
	f, err := NewStepFrames(newFake(-1), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(context.Background(), noTap{f}, defaultTake, Listener{Logits: func(int, int, []float32) {}})
	if err == nil || !strings.Contains(err.Error(), "cannot show logits") {
		t.Fatalf("error %v", err)
	}
}

type noTap struct{ FrameBackend }

// A prefill stopped by the caller ends the take as a cancel with no frames,
// not as an error.
func TestGenerateCancelDuringPrefill(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	res, err := generateSteps(ctx, stopsInBegin{newFake(-1), cancel}, defaultTake, Listener{})
	if err != nil || res.Reason != FinishCancel || len(res.Codes) != 0 {
		t.Fatalf("result %+v, err %v", res, err)
	}
}

type stopsInBegin struct {
	*fakeBackend
	cancel func()
}

func (s stopsInBegin) Begin(ctx context.Context, prompt []int, semantic []float32) error {
	s.cancel()
	return ctx.Err()
}
