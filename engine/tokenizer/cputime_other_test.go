//go:build !unix

package tokenizer

func processCPUSeconds() float64 { return -1 }
