package drama3

// This file holds the counter-based random generator the sampler draws from:
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy
// as 1, 2, 3", SC11; the Random123 library). A draw is a pure function of
// (seed, frame, codebook), so the CPU and GPU backends draw the same numbers
// in any order and a take is reproducible.

// Philox4x32-10 constants (Random123's PHILOX_M4x32_0/1 and PHILOX_W32_0/1).
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9 // golden ratio
	philoxW1 = 0xBB67AE85 // sqrt(3) - 1
)

// Philox4x32x10 maps a 128-bit counter and a 64-bit key to 128 random bits:
// ten rounds of the Philox S-box, the key bumped by the Weyl constants between
// rounds (the first round uses the key as given).
func Philox4x32x10(counter [4]uint32, key [2]uint32) [4]uint32 {
	c := counter
	k0, k1 := key[0], key[1]
	for round := 0; round < 10; round++ {
		if round > 0 {
			k0 += philoxW0
			k1 += philoxW1
		}
		p0 := uint64(philoxM0) * uint64(c[0])
		p1 := uint64(philoxM1) * uint64(c[2])
		hi0, lo0 := uint32(p0>>32), uint32(p0)
		hi1, lo1 := uint32(p1>>32), uint32(p1)
		c = [4]uint32{hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0}
	}
	return c
}

// DrawKey is the Philox key of a take: the low and high 32 bits of the
// request seed.
func DrawKey(seed uint64) [2]uint32 { return [2]uint32{uint32(seed), uint32(seed >> 32)} }

// DrawCounter is the Philox counter of one sampling decision: word 0 is the
// frame index in the take (0-based; frame f's codebook 0 is the draw that may
// also pick end of speech), word 1 the codebook (0..9), words 2 and 3 zero.
func DrawCounter(frame, codebook int) [4]uint32 {
	return [4]uint32{uint32(frame), uint32(codebook), 0, 0}
}

// Uniform is the sampler's uniform number for (seed, frame, codebook): word 0
// of Philox4x32x10(DrawCounter(frame, codebook), DrawKey(seed)) times 2^-32,
// a float64 in [0, 1) that is exact (every 32-bit integer times a power of two
// is representable), so any implementation gets the same value bit for bit.
func Uniform(seed uint64, frame, codebook int) float64 {
	w := Philox4x32x10(DrawCounter(frame, codebook), DrawKey(seed))
	return uniformOf(w[0])
}

// uniformOf maps a 32-bit word to [0, 1): word · 2^-32.
func uniformOf(word uint32) float64 { return float64(word) * 0x1p-32 }
