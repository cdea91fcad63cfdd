package gpuworker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The byte stream: the worker first writes Magic, then both sides exchange
// frames of [length uint32 LE][type byte][payload], length counting the type
// byte and the payload. Anything else the worker prints before Magic (a
// library that writes its failure to stdout, say) is its reason for not
// starting.
const (
	Magic           = "PGW1"
	ProtocolVersion = 1
	// MaxFrame bounds a frame so that a corrupt length cannot make the reader
	// allocate more: the largest payload is one PCM chunk (seconds of audio).
	MaxFrame = 64 << 20
)

// FrameType says what a frame's payload is.
type FrameType byte

const (
	FrameHello   FrameType = 1 // worker → client, JSON Hello, once, first
	FrameRequest FrameType = 2 // client → worker, JSON Request
	FrameCancel  FrameType = 3 // client → worker, uint64 LE request id
	FrameEvent   FrameType = 4 // worker → client, JSON Event
	FramePCM     FrameType = 5 // worker → client, binary PCM (see EncodePCM)
	FrameReply   FrameType = 6 // worker → client, JSON Reply: the request's end
)

func (t FrameType) String() string {
	switch t {
	case FrameHello:
		return "hello"
	case FrameRequest:
		return "request"
	case FrameCancel:
		return "cancel"
	case FrameEvent:
		return "event"
	case FramePCM:
		return "pcm"
	case FrameReply:
		return "reply"
	}
	return fmt.Sprintf("frame type %d", byte(t))
}

// ErrFrame marks a malformed frame (wrapped with the detail).
var ErrFrame = errors.New("malformed frame")

// WriteFrame writes one frame. The caller serialises writers.
func WriteFrame(w io.Writer, t FrameType, payload []byte) error {
	if len(payload)+1 > MaxFrame {
		return fmt.Errorf("gpuworker: %s frame of %d bytes exceeds %d: %w", t, len(payload), MaxFrame, ErrFrame)
	}
	var hdr [5]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(len(payload)+1))
	hdr[4] = byte(t)
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// ReadFrame reads one frame. io.EOF means the stream ended cleanly between
// frames; a stream cut inside a frame is io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader) (FrameType, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:4]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:4])
	if n < 1 || n > MaxFrame {
		return 0, nil, fmt.Errorf("gpuworker: frame length %d outside [1, %d]: %w", n, MaxFrame, ErrFrame)
	}
	if _, err := io.ReadFull(r, hdr[4:5]); err != nil {
		return 0, nil, noEOF(err)
	}
	t := FrameType(hdr[4])
	if t < FrameHello || t > FrameReply {
		return 0, nil, fmt.Errorf("gpuworker: unknown frame type %d: %w", hdr[4], ErrFrame)
	}
	payload := make([]byte, n-1)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, noEOF(err)
	}
	return t, payload, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
