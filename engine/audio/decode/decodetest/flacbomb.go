// Package decodetest builds hostile audio files for tests of the decoders
// and of the servers that take uploads: valid streams whose declaration or
// expansion is far beyond what a voice needs.
package decodetest

import "fmt"

// FLACBomb is a valid FLAC stream of bytes ≈ size: STREAMINFO declaring
// rate Hz, channels channels of 8 bits and declaredFrames frames (0: not
// said), then as many 65535-frame blocks of constant (silent) subframes as
// fit: about 27 bytes of file for every 65535·channels samples. At 655350 Hz
// and 8 channels, 12.6 KB is 47 s of audio, 1 GB as float32.
func FLACBomb(rate, channels int, declaredFrames int64, size int) []byte {
	if rate < 1 || rate >= 1<<20 || channels < 1 || channels > 8 || declaredFrames < 0 || declaredFrames >= 1<<36 {
		panic(fmt.Sprintf("decodetest: FLACBomb(%d Hz, %d channels, %d frames) cannot be written", rate, channels, declaredFrames))
	}
	const blockSize = 65535
	var w bitWriter
	w.bytes([]byte("fLaC"))
	// Metadata block header: last block, type 0 (STREAMINFO), 34 bytes.
	w.bits(1, 1)
	w.bits(0, 7)
	w.bits(34, 24)
	w.bits(blockSize, 16) // minimum block size
	w.bits(blockSize, 16) // maximum block size
	w.bits(0, 24)         // minimum frame size: unknown
	w.bits(0, 24)         // maximum frame size: unknown
	w.bits(uint64(rate), 20)
	w.bits(uint64(channels-1), 3)
	w.bits(8-1, 5) // bits per sample
	w.bits(uint64(declaredFrames), 36)
	w.bytes(make([]byte, 16)) // MD5 of the audio: not computed
	for n := 0; len(w.b) < size; n++ {
		w.bytes(frame(n, channels, blockSize))
	}
	return w.b
}

// frame is block number n: a header taking the rate from STREAMINFO,
// independent channels, and one constant subframe of value 0 per channel.
func frame(n, channels, blockSize int) []byte {
	var w bitWriter
	w.bits(0x3FFE, 14) // sync code
	w.bits(0, 1)       // reserved
	w.bits(0, 1)       // fixed block size: the header holds the frame number
	w.bits(0x7, 4)     // block size: 16 bits at the end of the header, minus 1
	w.bits(0, 4)       // sample rate: from STREAMINFO
	w.bits(uint64(channels-1), 4)
	w.bits(1, 3) // sample size: 8 bits
	w.bits(0, 1) // reserved
	w.bytes(utf8Number(uint64(n)))
	w.bits(uint64(blockSize-1), 16)
	w.bytes([]byte{crc8(w.b)})
	for range channels {
		w.bits(0, 1) // padding
		w.bits(0, 6) // SUBFRAME_CONSTANT
		w.bits(0, 1) // no wasted bits
		w.bits(0, 8) // the constant
	}
	crc := crc16(w.b)
	w.bits(uint64(crc), 16)
	return w.b
}

// utf8Number is FLAC's "UTF-8" coding of a frame number (up to 31 bits).
func utf8Number(v uint64) []byte {
	switch {
	case v < 0x80:
		return []byte{byte(v)}
	case v < 0x800:
		return []byte{0xC0 | byte(v>>6), 0x80 | byte(v&0x3F)}
	case v < 0x10000:
		return []byte{0xE0 | byte(v>>12), 0x80 | byte(v>>6&0x3F), 0x80 | byte(v&0x3F)}
	}
	return []byte{0xF0 | byte(v>>18), 0x80 | byte(v>>12&0x3F), 0x80 | byte(v>>6&0x3F), 0x80 | byte(v&0x3F)}
}

// bitWriter appends bits most significant first; every field here ends on
// a byte boundary before bytes or a CRC is taken.
type bitWriter struct {
	b     []byte
	nbits uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		if w.nbits%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>uint(i)&1) << (7 - w.nbits%8)
		w.nbits++
	}
}

func (w *bitWriter) bytes(p []byte) {
	for _, c := range p {
		w.bits(uint64(c), 8)
	}
}

// crc8 is FLAC's header CRC: polynomial x^8+x^2+x+1, initial 0.
func crc8(p []byte) byte {
	var c byte
	for _, x := range p {
		c ^= x
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// crc16 is FLAC's frame CRC: polynomial x^16+x^15+x^2+1, initial 0.
func crc16(p []byte) uint16 {
	var c uint16
	for _, x := range p {
		c ^= uint16(x) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x8005
			} else {
				c <<= 1
			}
		}
	}
	return c
}
