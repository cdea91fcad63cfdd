//go:build !linux

package checkpoint

// openDirectFile is nil where the loader has no O_DIRECT path: every file
// is read buffered.
var openDirectFile func(path string) (loadFile, error)
