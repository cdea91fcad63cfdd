package main

import (
	"fmt"
	"os"
	"strings"

	"proscenium/app/voicelib"
	"proscenium/engine/api"
	"proscenium/engine/audio/decode"
	"proscenium/engine/drama3"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// loadReferences reads each reference recording (decode.ReadReference: WAV,
// FLAC, MP3 or Ogg Opus, 2–30 s) and encodes it with the model's codec;
// texts[i] is what files[i] says.
func loadReferences(modelDir string, files, texts []string) ([]api.Reference, error) {
	if len(files) != len(texts) {
		return nil, fmt.Errorf("%w: %d --ref files and %d --ref-text transcripts: give one transcript per reference, in order", errUsage, len(files), len(texts))
	}
	if len(files) == 0 {
		return nil, nil
	}
	enc, err := voicelib.LoadCPUEncoder(drama3.CodecPath(modelDir))
	if err != nil {
		return nil, err
	}
	refs := make([]api.Reference, len(files))
	for i, f := range files {
		b, err := readCapped(f, voicelib.MaxAudioBytes)
		if err != nil {
			return nil, err
		}
		ref, err := decode.ReadReference(b)
		if err != nil {
			return nil, fmt.Errorf("--ref %s: %w", f, err)
		}
		flat, frames, err := enc.EncodeReference(ref.Samples)
		if err != nil {
			return nil, fmt.Errorf("--ref %s: %w", f, err)
		}
		nb := enc.Codebooks()
		codes := make([][]int, frames)
		for fr := range codes {
			codes[fr] = make([]int, nb)
			for c := range codes[fr] {
				codes[fr][c] = int(flat[fr*nb+c])
			}
		}
		refs[i] = api.Reference{Transcript: texts[i], Codes: codes}
	}
	return refs, nil
}

// readCapped reads the --ref file path, refusing one over limit bytes
// (readAtMost: /dev/zero is refused, --ref <(command) works).
func readCapped(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, over, err := readAtMost(f, limit)
	switch {
	case err != nil:
		return nil, err
	case over:
		return nil, fmt.Errorf("--ref %s: more than the limit of %d bytes", path, limit)
	}
	return b, nil
}
