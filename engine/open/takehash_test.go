package open

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"proscenium/engine"
	"testing"

	"proscenium/engine/drama3"
)

// recordedTakes are CPU takes on demo checkpoints whose codes and PCM were
// hashed before the engine was reshaped around the frame-level backend
// contract (issue 13). A change that alters any arithmetic, sampling order or
// decode history changes a hash. PROSCENIUM_PRINT_TAKE_HASHES=1 prints them.
var recordedTakes = []struct {
	name  string
	fused bool // checkpoint with fused experts and a semantic_head tensor
	req   engine.SpeechRequest
	codes string // sha256 of the codes, "%d," per code, frame-major
	pcm   string // sha256 of the PCM's float32 bits, little endian
}{
	{"default seed 1", false, engine.SpeechRequest{Text: "Hello there.", Sampling: engine.DefaultSampling(), Seed: 1, MaxFrames: 16},
		"bdcffce12df08c3deccea02f1ea0b4167df435a9358dffde5ab9670526c2b4f8",
		"6811da1d8c12817b63a31b969cbbb3a936870653dce8935410ab2ed06c86203b"},
	{"default seed 2", false, engine.SpeechRequest{Text: "Hello there.", Sampling: engine.DefaultSampling(), Seed: 2, MaxFrames: 16},
		"fd8592d8decc7e6e2b4f202103cc6da0c6d5450d63cbd90c83b506b01bc24766",
		"17616bc52d71129e6b83afe464aa70b45771329423cdc33ccbf7ddd84a3359aa"},
	{"greedy", false, engine.SpeechRequest{Text: "A greedy take.", Sampling: engine.Sampling{Temperature: 0, TopP: 1, TopK: 0}, Seed: 3, MaxFrames: 10},
		"76543a515fabd5ac2ffe581ad6ee4925b75dc4f6fd5a09387d5a1b29ef38dcf7",
		"6e8a570548aeb237759c0cb4fd4e4d80a3ed2aa442be0c0642ee7ecd6dd97631"},
	{"top-k 5", false, engine.SpeechRequest{Text: "Few choices.", Sampling: engine.Sampling{Temperature: 0.7, TopP: 1, TopK: 5}, Seed: 4, MaxFrames: 12},
		"1ebb519ca1cfb7e37af4d5f8b37bbfcd4fa16d00c80f74fb910011224504811c",
		"bdaf9bacb4bbe193d5596d3401b89810ccb0f9b1f7e592d0d51f64dd507d5da3"},
	{"fused experts, semantic head", true, engine.SpeechRequest{Text: "Fused.", Sampling: engine.DefaultSampling(), Seed: 5, MaxFrames: 12},
		"e12dc1b06f87a9b051cd7e429c694ba58ad54aa6ee02b2bc9b616bdd32a59959",
		"583bfc7aec674e33ea0a09cca1a3037331a5b00c3838862ce449a6f438780223"},
}

func TestRecordedTakeHashes(t *testing.T) {
	openTiny(t)
	print := os.Getenv("PROSCENIUM_PRINT_TAKE_HASHES") != ""
	engines := map[bool]engine.Engine{}
	engines[false], _ = tinyEngine()
	for _, c := range recordedTakes {
		eng := engines[c.fused]
		if eng == nil {
			base, err := os.ReadFile(mustBaseTokenizer(t))
			if err != nil {
				t.Fatal(err)
			}
			fdir := t.TempDir()
			if err := drama3.WriteTiny(fdir, drama3.TinyOptions{Seed: 2, BaseTokenizer: base, FusedExperts: true, SemanticHead: true}); err != nil {
				t.Fatal(err)
			}
			if eng, err = Open(context.Background(), fdir, Options{Backend: CPU}); err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			engines[c.fused] = eng
		}
		var pcm []float32
		fin, err := eng.Synthesize(context.Background(), c.req, func(ev engine.Event) {
			if ev.Kind == engine.EventAudio {
				pcm = append(pcm, ev.Audio.PCM...)
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		codes, audio := hashCodes(fin.Codes), hashPCM(pcm)
		if print {
			fmt.Printf("%s: %d frames %s\n\t%q,\n\t%q},\n", c.name, fin.Frames, fin.Reason, codes, audio)
			continue
		}
		if codes != c.codes || audio != c.pcm {
			t.Errorf("%s: codes %s pcm %s, recorded %s %s", c.name, codes, audio, c.codes, c.pcm)
		}
	}
}

func mustBaseTokenizer(t *testing.T) string {
	path, err := drama3.FindBaseTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func hashCodes(codes [][]int) string {
	h := sha256.New()
	for _, f := range codes {
		for _, c := range f {
			fmt.Fprintf(h, "%d,", c)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashPCM(pcm []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range pcm {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
