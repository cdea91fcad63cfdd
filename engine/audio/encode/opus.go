package encode

// #cgo pkg-config: libopusenc
// #include <opusenc.h>
// static int set_bitrate(OggOpusEnc *e, opus_int32 b) { return ope_encoder_ctl(e, OPUS_SET_BITRATE(b)); }
// static int set_no_delay(OggOpusEnc *e) { return ope_encoder_ctl(e, OPE_SET_DECISION_DELAY(0)); }
import "C"

import (
	"errors"
	"fmt"
	"io"
	"unsafe"
)

// opusBitrate is 64 kbit/s: Opus's own guidance for fullband mono speech
// at transparent quality is 32–64.
const opusBitrate = 64000

// opusEncoder writes Ogg Opus (RFC 7845) with libopusenc, which resamples
// the input to Opus's 48 kHz itself and records the input rate in the
// header; decoders play Opus at 48 kHz. The header's pre-skip and the last
// page's granule position trim the codec's delay and padding, so the
// decoded take has the samples put in (at 48 kHz). After each Write the
// finished packets go out as a page, so a stream follows the take closely.
type opusEncoder struct {
	w    io.Writer
	n    int // samples written
	enc  *C.OggOpusEnc
	comm *C.OggOpusComments
}

func newOpus(w io.Writer, rate int) (Encoder, error) {
	comm := C.ope_comments_create()
	if comm == nil {
		return nil, errors.New("ope_comments_create failed")
	}
	var cerr C.int
	enc := C.ope_encoder_create_pull(comm, C.opus_int32(rate), 1, 0, &cerr)
	if enc == nil {
		C.ope_comments_destroy(comm)
		return nil, fmt.Errorf("ope_encoder_create_pull: %s", C.GoString(C.ope_strerror(cerr)))
	}
	e := &opusEncoder{w: w, enc: enc, comm: comm}
	if rc := C.set_bitrate(enc, opusBitrate); rc != C.OPE_OK {
		e.free()
		return nil, fmt.Errorf("setting the bitrate: %s", C.GoString(C.ope_strerror(rc)))
	}
	// libopusenc holds back 2 s of input by default to plan ahead; a
	// stream must not wait for that.
	if rc := C.set_no_delay(enc); rc != C.OPE_OK {
		e.free()
		return nil, fmt.Errorf("setting the decision delay: %s", C.GoString(C.ope_strerror(rc)))
	}
	return e, nil
}

func (e *opusEncoder) free() {
	if e.enc != nil {
		C.ope_encoder_destroy(e.enc)
		C.ope_comments_destroy(e.comm)
		e.enc, e.comm = nil, nil
	}
}

func (e *opusEncoder) Write(pcm []float32) error {
	if len(pcm) == 0 {
		return nil
	}
	if rc := C.ope_encoder_write_float(e.enc, (*C.float)(unsafe.Pointer(&pcm[0])), C.int(len(pcm))); rc != C.OPE_OK {
		return fmt.Errorf("ope_encoder_write_float: %s", C.GoString(C.ope_strerror(rc)))
	}
	e.n += len(pcm)
	return e.pages(true)
}

// pages writes every finished page (flush: also the packets not yet in one).
func (e *opusEncoder) pages(flush bool) error {
	for {
		var page *C.uchar
		var n C.opus_int32
		if C.ope_encoder_get_page(e.enc, &page, &n, boolInt(flush)) == 0 {
			return nil
		}
		if _, err := e.w.Write(C.GoBytes(unsafe.Pointer(page), C.int(n))); err != nil {
			return err
		}
	}
}

func (e *opusEncoder) Close() error {
	if e.enc == nil {
		return nil
	}
	defer e.free()
	if e.n == 0 { // libopusenc asserts on draining an empty stream: send the headers alone
		if rc := C.ope_encoder_flush_header(e.enc); rc != C.OPE_OK {
			return fmt.Errorf("ope_encoder_flush_header: %s", C.GoString(C.ope_strerror(rc)))
		}
		return e.pages(true)
	}
	if rc := C.ope_encoder_drain(e.enc); rc != C.OPE_OK {
		return fmt.Errorf("ope_encoder_drain: %s", C.GoString(C.ope_strerror(rc)))
	}
	return e.pages(true)
}
