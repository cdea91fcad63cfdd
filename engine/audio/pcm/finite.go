package pcm

// CheckFinite refuses NaN and infinities, naming the first bad sample: the
// encoders outside this package check their input the same way.
func CheckFinite(samples []float32) error { return checkFinite(samples) }
