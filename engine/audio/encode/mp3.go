package encode

// #cgo pkg-config: lame
// #include <stdlib.h>
// #include <lame/lame.h>
import "C"

import (
	"errors"
	"fmt"
	"io"
	"unsafe"
)

// mp3Bitrate is the constant bitrate in kbit/s: transparent for mono
// speech at every rate the API offers (MPEG-2 layer III at 16–24 kHz
// allows up to 160).
const mp3Bitrate = 128

// mp3Encoder writes MPEG layer III with libmp3lame, constant bitrate, mono.
// On a seekable writer it also writes LAME's Info tag (its first frame),
// which tells decoders the encoder delay and padding so that the decoded
// take has exactly the samples put in; a stream has no such tag and decodes
// with LAME's delay (1105 samples) of leading silence and a padded end.
type mp3Encoder struct {
	w   io.Writer
	gfp *C.lame_global_flags
	buf []byte
	tag bool // the writer is seekable: the first frame is the Info tag
}

func newMP3(w io.Writer, rate int) (Encoder, error) {
	gfp := C.lame_init()
	if gfp == nil {
		return nil, errors.New("lame_init failed")
	}
	_, tag := w.(io.WriteSeeker)
	C.lame_set_in_samplerate(gfp, C.int(rate))
	C.lame_set_out_samplerate(gfp, C.int(rate)) // never resample
	C.lame_set_num_channels(gfp, 1)
	C.lame_set_mode(gfp, C.MONO)
	C.lame_set_brate(gfp, mp3Bitrate)
	C.lame_set_quality(gfp, 2) // LAME's "high quality" (-h)
	C.lame_set_bWriteVbrTag(gfp, boolInt(tag))
	if rc := C.lame_init_params(gfp); rc < 0 {
		C.lame_close(gfp)
		return nil, fmt.Errorf("lame_init_params: error %d", int(rc))
	}
	return &mp3Encoder{w: w, gfp: gfp, tag: tag}, nil
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func (e *mp3Encoder) Write(pcm []float32) error {
	for len(pcm) > 0 {
		n := min(len(pcm), 1<<16)
		// LAME's documented worst case: 1.25·n + 7200 bytes.
		need := n + n/4 + 7200
		if cap(e.buf) < need {
			e.buf = make([]byte, need)
		}
		buf := e.buf[:need]
		p := (*C.float)(unsafe.Pointer(&pcm[0]))
		rc := C.lame_encode_buffer_ieee_float(e.gfp, p, p, C.int(n),
			(*C.uchar)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
		if rc < 0 {
			return fmt.Errorf("lame_encode_buffer_ieee_float: error %d", int(rc))
		}
		if _, err := e.w.Write(buf[:rc]); err != nil {
			return err
		}
		pcm = pcm[n:]
	}
	return nil
}

func (e *mp3Encoder) Close() error {
	if e.gfp == nil {
		return nil
	}
	defer func() { C.lame_close(e.gfp); e.gfp = nil }()
	buf := make([]byte, 7200)
	rc := C.lame_encode_flush(e.gfp, (*C.uchar)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
	if rc < 0 {
		return fmt.Errorf("lame_encode_flush: error %d", int(rc))
	}
	if _, err := e.w.Write(buf[:rc]); err != nil {
		return err
	}
	if !e.tag {
		return nil
	}
	tag := make([]byte, 2880) // the largest layer III frame
	n := C.lame_get_lametag_frame(e.gfp, (*C.uchar)(unsafe.Pointer(&tag[0])), C.size_t(len(tag)))
	if n == 0 || int(n) > len(tag) {
		return fmt.Errorf("lame_get_lametag_frame: %d bytes", int(n))
	}
	ws := e.w.(io.WriteSeeker)
	if _, err := ws.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := ws.Write(tag[:n]); err != nil {
		return err
	}
	_, err := ws.Seek(0, io.SeekEnd)
	return err
}
