package loudness

import (
	"errors"
	"fmt"
	"math"
)

// Plan is the gain that brings a programme to a target loudness, and what
// the programme measures before and after it.
type Plan struct {
	Measured float64 `json:"measured_lufs"`    // integrated loudness as given
	Peak     float64 `json:"true_peak_dbtp"`   // true peak as given
	Target   float64 `json:"target_lufs"`      // asked for
	Ceiling  float64 `json:"ceiling_dbtp"`     // the true peak may not pass this
	GainDB   float64 `json:"gain_db"`          // to apply
	Result   float64 `json:"result_lufs"`      // Measured + GainDB
	ResultTP float64 `json:"result_peak_dbtp"` // Peak + GainDB
	// Limited says the gain stops short of the target because the true
	// peak would pass the ceiling (a gain changes loudness and true peak by
	// the same number of dB; nothing here compresses or limits).
	Limited bool `json:"limited"`
}

// The targets a user may ask for: quieter than -40 LUFS is inaudible
// programme, louder than -5 is above anything a true-peak ceiling allows.
const (
	MinTarget = -40.0
	MaxTarget = -5.0
)

// ErrSilent is returned when a programme has no level to normalise.
var ErrSilent = errors.New("the audio is silent (below -70 LUFS): nothing to normalise")

// PlanGain measures pcm and returns the gain to target LUFS with the true
// peak at most ceiling dBTP.
func PlanGain(pcm []float32, rate int, target, ceiling float64) (Plan, error) {
	if math.IsNaN(target) || target < MinTarget || target > MaxTarget {
		return Plan{}, fmt.Errorf("loudness target %v LUFS: choose from %v to %v", target, MinTarget, MaxTarget)
	}
	if math.IsNaN(ceiling) || ceiling > 0 || ceiling < -20 {
		return Plan{}, fmt.Errorf("true-peak ceiling %v dBTP: choose from -20 to 0", ceiling)
	}
	measured, err := Integrated(pcm, rate)
	if err != nil {
		return Plan{}, err
	}
	if math.IsInf(measured, -1) {
		return Plan{}, ErrSilent
	}
	p := Plan{Measured: measured, Peak: TruePeak(pcm, rate), Target: target, Ceiling: ceiling}
	p.GainDB = target - measured
	if p.Peak+p.GainDB > ceiling {
		p.GainDB = ceiling - p.Peak
		p.Limited = true
	}
	p.Result = measured + p.GainDB
	p.ResultTP = p.Peak + p.GainDB
	return p, nil
}

// Apply multiplies pcm by the gain in place.
func Apply(pcm []float32, gainDB float64) {
	g := float32(math.Pow(10, gainDB/20))
	for i := range pcm {
		pcm[i] *= g
	}
}
