package encode

// #cgo pkg-config: fdk-aac
// #include <fdk-aac/aacenc_lib.h>
//
// // encode makes one aacEncEncode call: n samples in (n < 0 flushes), at
// // most one access unit out.
// static AACENC_ERROR encode(HANDLE_AACENCODER h, INT_PCM *in, int n, UCHAR *out, int outSize, int *outBytes, int *consumed) {
// 	void *inPtr = in, *outPtr = out;
// 	INT inId = IN_AUDIO_DATA, inSize = n > 0 ? n * (int)sizeof(INT_PCM) : 0, inEl = sizeof(INT_PCM);
// 	INT outId = OUT_BITSTREAM_DATA, outEl = 1;
// 	AACENC_BufDesc inBuf = {1, &inPtr, &inId, &inSize, &inEl};
// 	AACENC_BufDesc outBuf = {1, &outPtr, &outId, &outSize, &outEl};
// 	AACENC_InArgs inArgs = {n > 0 ? n : -1, 0};
// 	AACENC_OutArgs outArgs = {0};
// 	AACENC_ERROR err = aacEncEncode(h, &inBuf, &outBuf, &inArgs, &outArgs);
// 	*outBytes = outArgs.numOutBytes;
// 	*consumed = outArgs.numInSamples;
// 	return err;
// }
import "C"

import (
	"fmt"
	"io"
	"unsafe"
)

// aacEncoder writes AAC-LC in ADTS frames with libfdk-aac (Fraunhofer's
// encoder), mono. ADTS carries no priming information: decoders output the
// encoder's delay (2048 samples at these rates) of leading silence and pad
// the end to a whole 1024-sample frame.
type aacEncoder struct {
	w     io.Writer
	h     C.HANDLE_AACENCODER
	frame int // samples per access unit
	conv  []int16
	out   []byte
}

// aacBitrate is per channel: 96 kbit/s, which the encoder lowers to the
// most a low sample rate allows.
const aacBitrate = 96000

func newAAC(w io.Writer, rate int) (Encoder, error) {
	e := &aacEncoder{w: w, out: make([]byte, 8192)}
	if rc := C.aacEncOpen(&e.h, 0x01, 1); rc != C.AACENC_OK { // AAC core only, one channel
		return nil, fmt.Errorf("aacEncOpen: error %#x", int(rc))
	}
	bitrate := min(aacBitrate, 6*rate) // ADTS's limit is 6144 bits per 1024-sample frame
	for _, p := range []struct {
		name  string
		param C.AACENC_PARAM
		value C.UINT
	}{
		{"AOT", C.AACENC_AOT, 2}, // MPEG-4 AAC Low Complexity
		{"SAMPLERATE", C.AACENC_SAMPLERATE, C.UINT(rate)},
		{"CHANNELMODE", C.AACENC_CHANNELMODE, C.MODE_1},
		{"BITRATE", C.AACENC_BITRATE, C.UINT(bitrate)},
		{"TRANSMUX", C.AACENC_TRANSMUX, 2}, // ADTS
		{"AFTERBURNER", C.AACENC_AFTERBURNER, 1},
	} {
		if rc := C.aacEncoder_SetParam(e.h, p.param, p.value); rc != C.AACENC_OK {
			e.free()
			return nil, fmt.Errorf("aacEncoder_SetParam %s=%d: error %#x", p.name, int(p.value), int(rc))
		}
	}
	if rc := C.aacEncEncode(e.h, nil, nil, nil, nil); rc != C.AACENC_OK {
		e.free()
		return nil, fmt.Errorf("initialising the encoder: error %#x", int(rc))
	}
	var info C.AACENC_InfoStruct
	if rc := C.aacEncInfo(e.h, &info); rc != C.AACENC_OK {
		e.free()
		return nil, fmt.Errorf("aacEncInfo: error %#x", int(rc))
	}
	e.frame = int(info.frameLength)
	return e, nil
}

func (e *aacEncoder) free() {
	if e.h != nil {
		C.aacEncClose(&e.h)
		e.h = nil
	}
}

func (e *aacEncoder) Write(pcm []float32) error {
	e.conv = toPCM16(e.conv, pcm)
	in := e.conv
	for len(in) > 0 {
		n := min(len(in), e.frame)
		consumed, err := e.call((*C.INT_PCM)(unsafe.Pointer(&in[0])), n)
		if err != nil {
			return err
		}
		in = in[consumed:]
	}
	return nil
}

// call encodes n samples (n < 0: flush) and writes the access unit made,
// if any; it returns how many samples the encoder took.
func (e *aacEncoder) call(in *C.INT_PCM, n int) (int, error) {
	var outBytes, consumed C.int
	rc := C.encode(e.h, in, C.int(n), (*C.UCHAR)(unsafe.Pointer(&e.out[0])), C.int(len(e.out)), &outBytes, &consumed)
	if rc == C.AACENC_ENCODE_EOF {
		return 0, io.EOF
	}
	if rc != C.AACENC_OK {
		return 0, fmt.Errorf("aacEncEncode: error %#x", int(rc))
	}
	if outBytes > 0 {
		if _, err := e.w.Write(e.out[:outBytes]); err != nil {
			return 0, err
		}
	}
	if n > 0 && consumed == 0 && outBytes == 0 {
		return 0, fmt.Errorf("aacEncEncode took none of %d samples", n)
	}
	return int(consumed), nil
}

func (e *aacEncoder) Close() error {
	if e.h == nil {
		return nil
	}
	defer e.free()
	for {
		if _, err := e.call(nil, -1); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
