package api

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// Settings read as float64 that float32 cannot hold are refused naming the
// field, as are out-of-range ones; good ones convert exactly as float32.
func TestSamplingOf(t *testing.T) {
	for _, c := range []struct {
		temperature, topP float64
		topK              int
		want              string // "" accepted
	}{
		{1, 0.9, 30, ""},
		{0, 1, 0, ""},
		{1, 1e-50, 0, "top_p"},
		{1e-60, 1, 0, "temperature"},
		{1e300, 1, 0, "temperature"},
		{1, math.NaN(), 0, "top_p"},
		{-1, 1, 0, "temperature"},
		{1, 0, 0, "top_p"},
		{1, 1.5, 0, "top_p"},
		{1, 1, -2, "top_k"},
	} {
		s, err := SamplingOf(c.temperature, c.topP, c.topK)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v %v %v: %v", c.temperature, c.topP, c.topK, err)
		case c.want == "" && (s.Temperature != float32(c.temperature) || s.TopP != float32(c.topP) || s.TopK != c.topK):
			t.Errorf("%v %v %v: got %+v", c.temperature, c.topP, c.topK, s)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalidRequest)):
			t.Errorf("%v %v %v: error %v, want one naming %s", c.temperature, c.topP, c.topK, err, c.want)
		}
	}
}

func TestSpeechRequestValidate(t *testing.T) {
	if err := (SpeechRequest{Text: "hi", Sampling: DefaultSampling(), MaxFrames: 0}).Validate(); err == nil || !strings.Contains(err.Error(), "max_frames") {
		t.Errorf("max_frames 0: error %v", err)
	}
	if err := (SpeechRequest{Text: "hi", Sampling: Sampling{Temperature: 1, TopP: 0}, MaxFrames: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "top_p") {
		t.Errorf("top_p 0: error %v", err)
	}
	if err := (SpeechRequest{Text: "hi", Sampling: DefaultSampling(), MaxFrames: 1}).Validate(); err != nil {
		t.Errorf("good request: %v", err)
	}
}

// Batch sizes: 0 is the default, 1…MaxBatch are taken, the rest refused
// naming the value; lists are comma-separated sizes.
func TestBatchSizes(t *testing.T) {
	for in, want := range map[int]int{0: DefaultBatch, 1: 1, MaxBatch: MaxBatch} {
		if got, err := BatchOf(in); err != nil || got != want {
			t.Errorf("BatchOf(%d) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []int{-1, MaxBatch + 1} {
		if _, err := BatchOf(bad); !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), fmt.Sprint(bad)) {
			t.Errorf("BatchOf(%d): %v", bad, err)
		}
	}
	if got, err := ParseBatches("1, 2,4,8"); err != nil || !slices.Equal(got, []int{1, 2, 4, 8}) {
		t.Errorf("ParseBatches: %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "9", "1,,2", "two", "1;2"} {
		if _, err := ParseBatches(bad); err == nil {
			t.Errorf("ParseBatches(%q) took it", bad)
		}
	}
}
