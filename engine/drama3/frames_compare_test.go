package drama3

import (
	"context"
	"reflect"
	"testing"

	"proscenium/engine/sampling"
)

// countingFrames makes frame f's codes {f, f+1}, or the forced ones, and ends
// at frame end.
type countingFrames struct {
	f, end int
	tap    func(frame, codebook int, logits []float32)
}

func (c *countingFrames) CodebookEntries() []int { return []int{9, 9} }
func (c *countingFrames) SamplesPerFrame() int   { return 1 }
func (c *countingFrames) Begin(context.Context, []int, sampling.Settings, uint64) error {
	c.f = 0
	return nil
}
func (c *countingFrames) Frame(codes, forced []int) (bool, error) {
	if c.f == c.end {
		return true, nil
	}
	copy(codes, []int{c.f, c.f + 1})
	if forced != nil {
		copy(codes, forced)
	}
	c.f++
	return false, nil
}
func (c *countingFrames) Decode(int, int) ([]float32, error) { return nil, nil }
func (c *countingFrames) Close() error                       { return nil }

func TestMakeFrames(t *testing.T) {
	b := &countingFrames{end: 3}
	got, ended, err := MakeFrames(b, 5, nil)
	if err != nil || !ended || !reflect.DeepEqual(got, [][]int{{0, 1}, {1, 2}, {2, 3}}) {
		t.Fatalf("free: %v %v %v", got, ended, err)
	}
	b.Begin(context.Background(), nil, sampling.Settings{}, 0)
	got, ended, err = MakeFrames(b, 2, [][]int{{7, 7}, {8, 8}})
	if err != nil || ended || !reflect.DeepEqual(got, [][]int{{7, 7}, {8, 8}}) {
		t.Fatalf("forced: %v %v %v", got, ended, err)
	}
}

func TestLogitsDiffAndLog(t *testing.T) {
	if d := LogitsDiff([]float32{1, 2.5, -4}, []float32{1, 2, -4}); d != 0.5/4 {
		t.Errorf("LogitsDiff = %v, want 0.125", d)
	}
	if d := LogitsDiff([]float32{0.5}, []float32{0}); d != 0.5 {
		t.Errorf("LogitsDiff against zeros = %v, want the plain difference 0.5", d)
	}
	l := LogitsLog{}
	v := []float32{1, 2}
	l.Tap(3, 1, v)
	v[0] = 9
	if got := l[[2]int{3, 1}]; !reflect.DeepEqual(got, []float32{1, 2}) {
		t.Errorf("the log kept %v, want a copy {1 2}", got)
	}
}
