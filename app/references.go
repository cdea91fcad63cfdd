package app

import (
	"fmt"
	"path/filepath"
	"sync"

	"proscenium/app/voicelib"
)

// This file encodes reference recordings (voices to clone) with the loaded
// model's codec: the speech API's ref_audio and references use it.

// refEncoder caches the CPU codec encoder of one model directory.
type refEncoder struct {
	mu  sync.Mutex
	dir string
	enc *voicelib.CPUEncoder
}

var refEncoders refEncoder

// refEncoder returns the loaded model's codec encoder (loaded once per
// model directory).
func (s *Service) refEncoder() (*voicelib.CPUEncoder, error) {
	if _, err := LoadedEngine(s); err != nil {
		return nil, err
	}
	s.mu.Lock()
	dir := s.model.Dir
	s.mu.Unlock()
	refEncoders.mu.Lock()
	defer refEncoders.mu.Unlock()
	if refEncoders.enc == nil || refEncoders.dir != dir {
		enc, err := voicelib.LoadCPUEncoder(filepath.Join(dir, "codec.pth"))
		if err != nil {
			return nil, fmt.Errorf("the model's codec cannot encode references: %w", err)
		}
		refEncoders.dir, refEncoders.enc = dir, enc
	}
	return refEncoders.enc, nil
}

// EncodeReference reads a recording (WAV, FLAC, MP3 or Ogg Opus, 2–30 s,
// not silent) and returns its codes from the loaded model's codec, one []int
// per frame.
func (s *Service) EncodeReference(recording []byte) ([][]int, error) {
	enc, err := s.refEncoder()
	if err != nil {
		return nil, err
	}
	if len(recording) > voicelib.MaxAudioBytes {
		return nil, fmt.Errorf("the recording is %d bytes, more than the limit of %d", len(recording), voicelib.MaxAudioBytes)
	}
	return enc.EncodeRecording(recording)
}
