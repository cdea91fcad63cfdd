package stretch

import (
	"fmt"
	"math"
	"testing"
)

// dominant returns the strongest frequency of x (Hz) among candidates, by
// correlating with each (a pitch check that needs no FFT).
func power(x []float32, rate int, hz float64) float64 {
	var re, im float64
	for i, v := range x {
		a := 2 * math.Pi * hz * float64(i) / float64(rate)
		re += float64(v) * math.Cos(a)
		im += float64(v) * math.Sin(a)
	}
	return re*re + im*im
}

// A 220 Hz tone at any speed stays at 220 Hz (pitch preserved: a resampling
// speed change would move it to 220·speed) and lasts 1/speed as long.
func TestSpeedKeepsPitch(t *testing.T) {
	const rate, hz = 24000, 220.0
	n := 2 * rate
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(0.5 * math.Sin(2*math.Pi*hz*float64(i)/rate))
	}
	for _, speed := range []float64{0.25, 0.5, 1.5, 2, 4} {
		t.Run(fmt.Sprint(speed), func(t *testing.T) {
			st, err := New(rate, speed)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var out []float32
			for i := 0; i < n; i += 1000 {
				got, err := st.Process(in[i:min(n, i+1000)])
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, got...)
			}
			tail, err := st.Flush()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tail...)
			want := float64(n) / speed
			if math.Abs(float64(len(out))-want) > 0.02*want+512 {
				t.Fatalf("%d samples, want about %.0f", len(out), want)
			}
			mid := out[len(out)/4 : 3*len(out)/4]
			kept, moved := power(mid, rate, hz), power(mid, rate, hz*speed)
			if kept < 100*moved {
				t.Fatalf("power at %v Hz %.3g, at %v Hz %.3g: the pitch moved", hz, kept, hz*speed, moved)
			}
		})
	}
}

func TestBadSpeed(t *testing.T) {
	for _, s := range []float64{0, 0.2, 4.5, math.NaN(), math.Inf(1)} {
		if _, err := New(44100, s); err == nil {
			t.Errorf("speed %v accepted", s)
		}
	}
}
