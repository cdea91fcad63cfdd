package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/mewkiz/flac"
)

// decodeFLAC reads a FLAC stream with mewkiz/flac, scaling b-bit samples by
// 2^−(b−1). STREAMINFO's rate and channels fix the budget and its total
// sample count (when given) the first allocation.
func decodeFLAC(b []byte, maxSeconds float64) (*PCM, error) {
	st, err := flac.New(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	info := st.Info
	if info.BitsPerSample < 4 || info.BitsPerSample > 32 {
		return nil, fmt.Errorf("stream info: %d bits per sample", info.BitsPerSample)
	}
	declared := int64(info.NSamples)
	if info.NSamples > 1<<40 {
		declared = 1 << 40
	}
	bud, err := newBudget(int(info.SampleRate), int(info.NChannels), declared, maxSeconds)
	if err != nil {
		return nil, err
	}
	channels := bud.pcm.Channels
	scale := 1 / float32(uint64(1)<<(info.BitsPerSample-1))
	for {
		fr, err := st.ParseNext()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(fr.Subframes) != channels {
			return nil, fmt.Errorf("frame of %d channels in a %d-channel stream", len(fr.Subframes), channels)
		}
		n := int(fr.BlockSize)
		for _, sf := range fr.Subframes {
			if len(sf.Samples) < n {
				return nil, fmt.Errorf("subframe of %d samples in a block of %d", len(sf.Samples), n)
			}
		}
		dst, err := bud.take(n)
		if err != nil {
			return nil, err
		}
		for c, sf := range fr.Subframes {
			for i, v := range sf.Samples[:n] {
				dst[i*channels+c] = float32(v) * scale
			}
		}
	}
	return bud.result(), nil
}
