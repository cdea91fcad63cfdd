package checkpoint

import (
	"crypto/sha256"
	"fmt"
	"io"

	"proscenium/internal/regular"
)

// HashFile is the SHA-256 of the regular file at path, read as a stream
// (a FIFO or a device is refused before reading): the voice library names
// a codec.pth by it.
func HashFile(path string) ([]byte, error) {
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h.Sum(nil), nil
}
