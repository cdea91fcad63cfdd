package api

import (
	"math"
	"time"
)

// JSON says its units: a duration crosses as a float64 in the unit its
// field's name ends with (_ms, _s), never as time.Duration's nanoseconds.
// These convert, keeping microseconds (finer is clock noise).

// Millis is d in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)) / 1e3 }

// Seconds is d in seconds, to the microsecond.
func Seconds(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)) / 1e6 }
