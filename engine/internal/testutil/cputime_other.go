//go:build !unix

package testutil

// ProcessCPUSeconds is −1: this system has no getrusage.
func ProcessCPUSeconds() float64 { return -1 }
