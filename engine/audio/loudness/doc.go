// Package loudness measures programme loudness and true peak as ITU-R
// BS.1770-4 defines them (the measure EBU R128 uses) and works out the gain
// that brings a programme to a target loudness without its true peak
// passing a ceiling.
//
// It owns the arithmetic only: K-weighting (kweighting.go), the gated
// integrated loudness (integrated.go), the 4× oversampled true peak
// (truepeak.go) and the gain plan (gain.go). It reads float32 PCM in
// [-1, 1] and writes nothing; encoding and files belong to its callers.
//
// A mono programme is measured as one channel of weight 1 (BS.1770's own
// rule, and ffmpeg's ebur128 filter's default), not as "dual mono".
package loudness
