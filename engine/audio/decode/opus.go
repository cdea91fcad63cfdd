package decode

// #cgo pkg-config: opusfile
// #include <opusfile.h>
// #include <stdlib.h>
import "C"

import (
	"fmt"
	"unsafe"
)

// opusRate is the rate libopusfile decodes at, whatever the encoder's input
// rate was.
const opusRate = 48000

// decodeOpus reads an Ogg Opus file with libopusfile, downmixed to stereo
// by op_read_float_stereo (a mono stream's channel twice) at 48 kHz.
func decodeOpus(b []byte, maxSeconds float64) (*PCM, error) {
	// libopusfile keeps reading the buffer while the file is open: hand it a
	// C copy so the Go heap is not pinned across calls.
	cb := C.CBytes(b)
	defer C.free(cb)
	var cerr C.int
	of := C.op_open_memory((*C.uchar)(cb), C.size_t(len(b)), &cerr)
	if of == nil {
		return nil, fmt.Errorf("op_open_memory: %s", opusError(cerr))
	}
	defer C.op_free(of)
	// Ogg Opus's length is known only from the last page's granule
	// position: the budget starts at 10 s and is counted per packet.
	bud, err := newBudget(opusRate, 2, 0, maxSeconds)
	if err != nil {
		return nil, err
	}
	buf := make([]float32, 2*5760) // 120 ms at 48 kHz, the largest Opus packet
	for {
		n := C.op_read_float_stereo(of, (*C.float)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
		if n < 0 {
			if n == C.OP_HOLE { // a gap in the stream: go on, as players do
				continue
			}
			return nil, fmt.Errorf("op_read_float_stereo: %s", opusError(n))
		}
		if n == 0 {
			break
		}
		dst, err := bud.take(int(n))
		if err != nil {
			return nil, err
		}
		copy(dst, buf[:2*int(n)])
	}
	return bud.result(), nil
}

// opusError names a libopusfile error code.
func opusError(code C.int) string {
	switch code {
	case C.OP_EREAD:
		return "read error"
	case C.OP_EFAULT:
		return "internal error"
	case C.OP_EIMPL:
		return "an unsupported feature"
	case C.OP_EINVAL:
		return "invalid argument"
	case C.OP_ENOTFORMAT:
		return "not an Ogg Opus stream"
	case C.OP_EBADHEADER:
		return "a malformed header"
	case C.OP_EVERSION:
		return "an unsupported Opus version"
	case C.OP_EBADPACKET:
		return "a malformed packet"
	case C.OP_EBADLINK:
		return "a broken link"
	case C.OP_EBADTIMESTAMP:
		return "a bad timestamp"
	}
	return fmt.Sprintf("error %d", int(code))
}
