package decode

// #cgo pkg-config: libmpg123
// #include <mpg123.h>
// #include <stdlib.h>
// // float32 output, mono or stereo, at every rate the library knows.
// static int floatFormats(mpg123_handle *mh) {
// 	const long *rates; size_t n;
// 	int err = mpg123_format_none(mh);
// 	if (err != MPG123_OK) return err;
// 	mpg123_rates(&rates, &n);
// 	for (size_t i = 0; i < n; i++) {
// 		err = mpg123_format(mh, rates[i], MPG123_MONO | MPG123_STEREO, MPG123_ENC_FLOAT_32);
// 		if (err != MPG123_OK) return err;
// 	}
// 	return MPG123_OK;
// }
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

var mpg123Init = sync.OnceValue(func() C.int { return C.mpg123_init() })

// decodeMP3 reads an MPEG audio (layer III, and I/II) stream with libmpg123
// as float32, fed from memory. libmpg123 honours the LAME/Xing gapless
// information, removing the encoder's delay and padding. (go-mp3, pure Go,
// hung on mutated files under fuzzing.)
func decodeMP3(b []byte, maxSeconds float64) (*PCM, error) {
	if rc := mpg123Init(); rc != C.MPG123_OK {
		return nil, fmt.Errorf("mpg123_init: %s", C.GoString(C.mpg123_plain_strerror(rc)))
	}
	var cerr C.int
	mh := C.mpg123_new(nil, &cerr)
	if mh == nil {
		return nil, fmt.Errorf("mpg123_new: %s", C.GoString(C.mpg123_plain_strerror(cerr)))
	}
	defer C.mpg123_delete(mh)
	fail := func(what string) error { return fmt.Errorf("%s: %s", what, C.GoString(C.mpg123_strerror(mh))) }
	if C.mpg123_param(mh, C.MPG123_ADD_FLAGS, C.MPG123_QUIET, 0) != C.MPG123_OK {
		return nil, fail("mpg123_param")
	}
	if C.floatFormats(mh) != C.MPG123_OK {
		return nil, fail("mpg123_format")
	}
	if C.mpg123_open_feed(mh) != C.MPG123_OK {
		return nil, fail("mpg123_open_feed")
	}
	cb := C.CBytes(b)
	defer C.free(cb)
	if len(b) > 0 && C.mpg123_feed(mh, (*C.uchar)(cb), C.size_t(len(b))) != C.MPG123_OK {
		return nil, fail("mpg123_feed")
	}
	// MPEG audio declares no length: the budget starts at the first format
	// (at most 48 kHz stereo) and is counted per decoded buffer.
	var bud *budget
	buf := make([]float32, 1<<14)
	for {
		var done C.size_t
		rc := C.mpg123_read(mh, unsafe.Pointer(&buf[0]), C.size_t(4*len(buf)), &done)
		if rc == C.MPG123_NEW_FORMAT {
			var rate C.long
			var ch, enc C.int
			if C.mpg123_getformat(mh, &rate, &ch, &enc) != C.MPG123_OK {
				return nil, fail("mpg123_getformat")
			}
			if bud != nil && (int(ch) != bud.pcm.Channels || int(rate) != bud.pcm.Rate) {
				return nil, fmt.Errorf("the stream changes format mid-way (%d Hz %d channels, then %d Hz %d channels)", bud.pcm.Rate, bud.pcm.Channels, rate, ch)
			}
			if enc != C.MPG123_ENC_FLOAT_32 {
				return nil, fmt.Errorf("libmpg123 chose encoding %d, not float32", int(enc))
			}
			if bud == nil {
				var err error
				if bud, err = newBudget(int(rate), int(ch), 0, maxSeconds); err != nil {
					return nil, err
				}
			}
		}
		if n := int(done) / 4; n > 0 {
			if bud == nil {
				return nil, fmt.Errorf("samples before a format")
			}
			if n%bud.pcm.Channels != 0 {
				return nil, fmt.Errorf("a buffer of %d samples in a %d-channel stream", n, bud.pcm.Channels)
			}
			dst, err := bud.take(n / bud.pcm.Channels)
			if err != nil {
				return nil, err
			}
			copy(dst, buf[:n])
		}
		switch rc {
		case C.MPG123_OK, C.MPG123_NEW_FORMAT:
			continue
		case C.MPG123_NEED_MORE, C.MPG123_DONE: // the whole file is fed: its end
		default:
			return nil, fail("mpg123_read")
		}
		break
	}
	if bud == nil {
		return nil, fmt.Errorf("no MPEG audio frames in the file")
	}
	return bud.result(), nil
}
