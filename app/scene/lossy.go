package scene

import (
	"fmt"
	"math"

	"proscenium/engine/audio/decode"
	"proscenium/engine/audio/encode"
	"proscenium/engine/audio/loudness"
)

// A lossy codec (MP3, Opus) changes the waveform, and with it the true
// peak and the loudness: a scene planned to -1 dBTP can decode a few
// tenths of a dB over, and one whose energy lies above the codec's
// low-pass decodes quieter than planned. So a lossy scene is decoded again
// (engine/audio/decode: libmpg123, libopusfile) and measured; its gain
// moves by what the target asks, as far as the true peak allows, and it is
// encoded again, as a mastering engineer does with a meter on the codec's
// output.

// lossyMargin is how far under the ceiling a gain bound by the true peak
// aims (dB), so that the next encoding, itself a little different, lands
// under it; lossyTolerance is how near the target is on it (LU).
const (
	lossyMargin    = 0.1
	lossyTolerance = 0.1
)

// maxLossyTries bounds the encodings of a lossy scene; maxReadBack is the
// longest scene read back (seconds), under the decoder's limit of an hour.
const (
	maxLossyTries = 5
	maxReadBack   = 3580
)

// lossy reports whether f changes the waveform.
func lossy(f encode.Format) bool { return f == encode.MP3 || f == encode.Opus }

// decodedMono is an encoded file as a decoder plays it, mixed to mono, at
// the decoder's rate.
func decodedMono(data []byte) ([]float32, int, error) {
	p, _, err := decode.Decode(data, maxReadBack+10) // the codec's padding on top
	if err != nil {
		return nil, 0, fmt.Errorf("reading the encoded file back: %w", err)
	}
	return p.Mono(), p.Rate, nil
}

// decodedLevels are the true peak (dBTP) and integrated loudness (LUFS)
// of an encoded file as a decoder plays it.
func decodedLevels(data []byte) (peak, lufs float64, err error) {
	mono, rate, err := decodedMono(data)
	if err != nil {
		return 0, 0, err
	}
	if lufs, err = loudness.Integrated(mono, rate); err != nil {
		return 0, 0, fmt.Errorf("reading the encoded file back: %w", err)
	}
	return loudness.TruePeak(mono, rate), lufs, nil
}

// encodeUnderCeiling encodes pcm (its gain already applied) as f and, for
// a lossy f, reads the file back and lowers pcm by the true peak's excess
// over ceiling until the decoded file is under it. It returns the file,
// the gain it took on top of pcm's (dB, 0 or less) and the file's true
// peak as decoded (for a lossless f, pcm's own). A line's file keeps the
// scene's gain this way unless its encoding would pass the ceiling.
func encodeUnderCeiling(f encode.Format, rate int, pcm []float32, ceiling float64) (data []byte, lowered, peak float64, err error) {
	if data, err = encode.Encode(f, rate, pcm); err != nil {
		return nil, 0, 0, err
	}
	if !lossy(f) || float64(len(pcm))/float64(rate) > maxReadBack {
		return data, 0, loudness.TruePeak(pcm, rate), nil
	}
	for try := 1; ; try++ {
		mono, drate, err := decodedMono(data)
		if err != nil {
			return nil, 0, 0, err
		}
		peak = loudness.TruePeak(mono, drate)
		if peak <= ceiling {
			return data, lowered, peak, nil
		}
		if try == maxLossyTries {
			return nil, 0, 0, fmt.Errorf("its %s file's true peak stays at %.2f dBTP after %d encodings, over the %.0f dBTP ceiling", f, peak, try, ceiling)
		}
		d := ceiling - peak - lossyMargin
		loudness.Apply(pcm, d)
		lowered += d
		if data, err = encode.Encode(f, rate, pcm); err != nil {
			return nil, 0, 0, err
		}
	}
}

// encodeMeasured encodes pcm (its gain plan already applied) as f. For a
// lossy f it measures the decoded file and moves the gain toward the
// plan's target within its true-peak ceiling until the file is on target
// or as loud as the ceiling allows; pcm follows the gain, and the plan
// says the gain taken and the decoded file's loudness and true peak. A
// scene longer than the decoder's limit (an hour) is not read back, and
// its plan keeps the figures planned before encoding.
func encodeMeasured(f encode.Format, rate int, pcm []float32, plan *loudness.Plan) ([]byte, error) {
	data, err := encode.Encode(f, rate, pcm)
	if err != nil || !lossy(f) || float64(len(pcm))/float64(rate) > maxReadBack {
		return data, err
	}
	for try := 1; ; try++ {
		tp, lufs, err := decodedLevels(data)
		if err != nil {
			return nil, err
		}
		plan.ResultTP, plan.Result = tp, lufs
		up := plan.Target - lufs  // what the loudness asks (dB)
		room := plan.Ceiling - tp // what the true peak allows
		underCeiling := room >= 0
		onTarget := math.Abs(up) <= lossyTolerance
		peakBound := up > 0 && room < lossyMargin+lossyTolerance
		if underCeiling && (onTarget || peakBound) {
			plan.Limited = !onTarget
			return data, nil
		}
		if try == maxLossyTries {
			if underCeiling {
				plan.Limited = up > lossyTolerance
				return data, nil
			}
			return nil, fmt.Errorf("the %s scene's true peak stays at %.2f dBTP after %d encodings, over the %.0f dBTP ceiling", f, tp, try, plan.Ceiling)
		}
		d := up
		if room-lossyMargin < up {
			d = room - lossyMargin
		}
		loudness.Apply(pcm, d)
		plan.GainDB += d
		if data, err = encode.Encode(f, rate, pcm); err != nil {
			return nil, err
		}
	}
}
