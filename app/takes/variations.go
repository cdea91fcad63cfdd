package takes

import (
	"fmt"
	"math"
	"strconv"

	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
)

// This file is Speak ×N: N takes of one script made together (the engine
// runs them in one batch), each a variation of the request — another seed,
// or one sampling setting at a value the user picks — streaming into its
// own row of the list.

// Variations ask for Count takes of Request at once.
type Variations struct {
	Request api.SpeechRequest `json:"request"`
	Count   int               `json:"count"` // MinVariations … MaxVariations
	// Sweep is what varies: SweepSeed (also ""): seeds Request.Seed,
	// Request.Seed+1, …; SweepTemperature, SweepTopP or SweepTopK: that
	// setting takes Values[i] in take i, the seed stays.
	Sweep  string    `json:"sweep"`
	Values []float64 `json:"values"` // Count of them when a setting is swept
	// Cast, when not empty, names the voices of <|speaker:0|>, … as
	// voices.CastRequest's (app.Service.SpeakVariations resolves them into
	// Request's references once, for every take).
	Cast []string `json:"cast,omitempty"`
}

// Sweeps.
const (
	SweepSeed        = "seed"
	SweepTemperature = "temperature"
	SweepTopP        = "top_p"
	SweepTopK        = "top_k"
)

// Bounds of Variations.Count: the engine runs at most api.MaxBatch takes
// together.
const (
	MinVariations = 2
	MaxVariations = api.MaxBatch
)

// Requests are the takes' requests and names ("×4 · seed 8"), or an error
// naming the field at fault; nothing starts.
func (v Variations) Requests() ([]api.SpeechRequest, []string, error) {
	if v.Count < MinVariations || v.Count > MaxVariations {
		return nil, nil, fmt.Errorf("%w: count %d: Speak ×N makes %d to %d takes", studio.ErrInvalid, v.Count, MinVariations, MaxVariations)
	}
	sweep := v.Sweep
	if sweep == "" {
		sweep = SweepSeed
	}
	switch sweep {
	case SweepSeed:
		if len(v.Values) != 0 {
			return nil, nil, fmt.Errorf("%w: values: seeds are the request's seed and the ones after it, not given", studio.ErrInvalid)
		}
		if last := v.Request.Seed + uint64(v.Count-1); last > settings.MaxSeed || last < v.Request.Seed {
			return nil, nil, fmt.Errorf("%w: seed %d: its %d variations would pass the largest seed %d", studio.ErrInvalid, v.Request.Seed, v.Count, uint64(settings.MaxSeed))
		}
	case SweepTemperature, SweepTopP, SweepTopK:
		if len(v.Values) != v.Count {
			return nil, nil, fmt.Errorf("%w: values: %d given for %d takes of a %s sweep", studio.ErrInvalid, len(v.Values), v.Count, sweep)
		}
	default:
		return nil, nil, fmt.Errorf("%w: sweep %q: want seed, temperature, top_p or top_k", studio.ErrInvalid, v.Sweep)
	}
	reqs := make([]api.SpeechRequest, v.Count)
	names := make([]string, v.Count)
	for i := range reqs {
		r := v.Request
		label := ""
		switch sweep {
		case SweepSeed:
			r.Seed += uint64(i)
			label = "seed " + strconv.FormatUint(r.Seed, 10)
		case SweepTopK:
			k := v.Values[i]
			if k != math.Trunc(k) || k < 0 || k > math.MaxInt32 {
				return nil, nil, fmt.Errorf("%w: values[%d]: top_k %v must be a whole number ≥ 0", studio.ErrInvalid, i, k)
			}
			r.Sampling.TopK = int(k)
			label = "top_k " + strconv.Itoa(r.Sampling.TopK)
		default:
			t, p := float64(r.Sampling.Temperature), float64(r.Sampling.TopP)
			if sweep == SweepTemperature {
				t = v.Values[i]
			} else {
				p = v.Values[i]
			}
			s, err := api.SamplingOf(t, p, r.Sampling.TopK)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: values[%d]: %w", studio.ErrInvalid, i, err)
			}
			r.Sampling = s
			label = sweep + " " + strconv.FormatFloat(v.Values[i], 'g', -1, 64)
		}
		if err := settings.ValidateSpeech(r); err != nil {
			return nil, nil, fmt.Errorf("values[%d]: %w", i, err)
		}
		reqs[i] = r
		names[i] = "×" + strconv.Itoa(v.Count) + " · " + label
	}
	return reqs, names, nil
}

// StartVariations starts the takes of v together and returns at once, like
// StartTake; voices are kept with each. While a take runs, studio.ErrBusy.
func (l *List) StartVariations(v Variations, voices []string) ([]Take, error) {
	reqs, names, err := v.Requests()
	if err != nil {
		return nil, err
	}
	all := make([][]string, len(reqs))
	for i := range all {
		all[i] = voices
	}
	return l.startTakes(reqs, names, all, "variation")
}
