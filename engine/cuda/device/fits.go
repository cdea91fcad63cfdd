package device

import "fmt"

// CheckFits says whether n bytes at byte offset off lie in device block b
// (what names them in the error).
func CheckFits(b *Block, off, n int64, what string) error {
	if b == nil || b.Kind != DeviceMem {
		return fmt.Errorf("cuda: %s: not a device block", what)
	}
	if off < 0 || n < 0 || off+n > b.Bytes {
		return fmt.Errorf("cuda: %s: %d bytes at offset %d do not fit a %d-byte block", what, n, off, b.Bytes)
	}
	return nil
}

// FirstErr returns the first non-nil error of errs.
func FirstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
