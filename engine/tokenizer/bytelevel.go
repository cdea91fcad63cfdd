package tokenizer

import "unicode/utf8"

// The byte-level alphabet (GPT-2's bytes_to_unicode): every byte is written as
// one printable character so that BPE symbols are strings of characters. The
// printable bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for themselves; the
// other 68 bytes map, in byte order, to U+0100 onwards.
var (
	byteToRune [256]rune
	runeToByte = make(map[rune]byte, 256)
)

func init() {
	next := rune(256)
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		r := rune(b)
		if !printable {
			r = next
			next++
		}
		byteToRune[b] = r
		runeToByte[r] = byte(b)
	}
}

// byteLevelString writes bytes in the byte-level alphabet.
func byteLevelString(bs string) string {
	out := make([]rune, len(bs))
	for i := 0; i < len(bs); i++ {
		out[i] = byteToRune[bs[i]]
	}
	return string(out)
}

// appendTokenBytes appends what the ByteLevel decoder makes of one token: its
// bytes when every character is in the byte-level alphabet, else the token's
// own UTF-8 (added tokens such as "<|im_start|>" take either path to the same
// bytes).
func appendTokenBytes(dst []byte, tok string) []byte {
	start := len(dst)
	for _, r := range tok {
		b, ok := runeToByte[r]
		if !ok {
			return append(dst[:start], tok...)
		}
		dst = append(dst, b)
	}
	return dst
}

// lossyUTF8 turns bytes into a string as Rust's String::from_utf8_lossy does:
// each maximal ill-formed subsequence becomes one U+FFFD.
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			out = append(out, b[i:i+size]...)
			i += size
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		i += maximalSubpart(b[i:])
	}
	return string(out)
}

// maximalSubpart is the length (≥ 1) of the longest prefix of b that begins a
// well-formed UTF-8 sequence without completing one (Unicode §3.9, D93b).
func maximalSubpart(b []byte) int {
	lead := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case lead >= 0xC2 && lead <= 0xDF:
		need = 1
	case lead == 0xE0:
		need, lo = 2, 0xA0
	case lead >= 0xE1 && lead <= 0xEC, lead == 0xEE, lead == 0xEF:
		need = 2
	case lead == 0xED:
		need, hi = 2, 0x9F
	case lead == 0xF0:
		need, lo = 3, 0x90
	case lead >= 0xF1 && lead <= 0xF3:
		need = 3
	case lead == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		c := b[n]
		if k == 0 && (c < lo || c > hi) {
			break
		}
		if k > 0 && (c < 0x80 || c > 0xBF) {
			break
		}
		n++
	}
	return n
}
