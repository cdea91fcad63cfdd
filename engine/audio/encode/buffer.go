package encode

import (
	"errors"
	"io"
)

// Buffer is an in-memory io.WriteSeeker: whole replies encode into one so
// that the encoders can go back and complete their headers.
type Buffer struct {
	buf []byte
	pos int
}

// Write writes at the current position, growing the buffer as needed.
func (b *Buffer) Write(p []byte) (int, error) {
	if end := b.pos + len(p); end > len(b.buf) {
		b.buf = append(b.buf, make([]byte, end-len(b.buf))...)
	}
	copy(b.buf[b.pos:], p)
	b.pos += len(p)
	return len(p), nil
}

// Seek moves the position.
func (b *Buffer) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = int64(b.pos)
	case io.SeekEnd:
		base = int64(len(b.buf))
	default:
		return 0, errors.New("encode.Buffer: bad whence")
	}
	p := base + offset
	if p < 0 || p > int64(len(b.buf)) {
		return 0, errors.New("encode.Buffer: seek out of range")
	}
	b.pos = int(p)
	return p, nil
}

// Bytes returns the contents.
func (b *Buffer) Bytes() []byte { return b.buf }
