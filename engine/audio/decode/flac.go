package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/mewkiz/flac"
)

// decodeFLAC reads a FLAC stream with mewkiz/flac, scaling b-bit samples by
// 2^−(b−1).
func decodeFLAC(b []byte, maxSeconds float64) (*PCM, error) {
	st, err := flac.New(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	info := st.Info
	p := &PCM{Rate: int(info.SampleRate), Channels: int(info.NChannels)}
	if p.Rate < 1 || p.Channels < 1 || info.BitsPerSample < 4 || info.BitsPerSample > 32 {
		return nil, fmt.Errorf("stream info: %d Hz, %d channels, %d bits", p.Rate, p.Channels, info.BitsPerSample)
	}
	scale := 1 / float32(uint64(1)<<(info.BitsPerSample-1))
	for {
		fr, err := st.ParseNext()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(fr.Subframes) != p.Channels {
			return nil, fmt.Errorf("frame of %d channels in a %d-channel stream", len(fr.Subframes), p.Channels)
		}
		n := int(fr.BlockSize)
		for _, sf := range fr.Subframes {
			if len(sf.Samples) < n {
				return nil, fmt.Errorf("subframe of %d samples in a block of %d", len(sf.Samples), n)
			}
		}
		if maxFrames := frameLimit(maxSeconds, p.Rate); maxFrames > 0 && p.Frames()+n > maxFrames {
			return nil, tooLong(maxSeconds)
		}
		for i := 0; i < n; i++ {
			for _, sf := range fr.Subframes {
				p.Samples = append(p.Samples, float32(sf.Samples[i])*scale)
			}
		}
	}
	return p, nil
}
