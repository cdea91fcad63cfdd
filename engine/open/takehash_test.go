package open

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"proscenium/engine/api"
	"strings"
	"testing"

	"proscenium/engine/demo/qwen3"
	"proscenium/engine/drama3"
)

// recordedTakes are CPU takes on demo checkpoints (the CPU backend is the
// reference) with the hashes of their codes, of every logits vector their
// draws read and of their PCM. The codes alone change only where a draw
// flips, which a change of the backbone's arithmetic rarely does on a short
// take; the logits change with any of it, the PCM with the codec's. A change
// that alters any arithmetic, sampling order or decode history changes a
// hash. PROSCENIUM_PRINT_TAKE_HASHES=1 prints them (and skips the test: a
// printing run checks nothing).
var recordedTakes = []struct {
	name   string
	fused  bool // checkpoint with fused experts and a semantic_head tensor
	req    api.SpeechRequest
	codes  string // sha256 of the codes, "%d," per code, frame-major
	logits string // sha256 of every draw's logits in draw order: "logits.CB:" then the float32 bits, little endian
	pcm    string // sha256 of the PCM's float32 bits, little endian
}{
	{"default seed 1", false, api.SpeechRequest{Text: "Hello there.", Sampling: api.DefaultSampling(), Seed: 1, MaxFrames: 16},
		"bdcffce12df08c3deccea02f1ea0b4167df435a9358dffde5ab9670526c2b4f8",
		"3ae6a615a7db8467e0a3fe3f189a8fa78c47fce86a8c835175894802eecb84f0",
		"6811da1d8c12817b63a31b969cbbb3a936870653dce8935410ab2ed06c86203b"},
	{"default seed 2", false, api.SpeechRequest{Text: "Hello there.", Sampling: api.DefaultSampling(), Seed: 2, MaxFrames: 16},
		"fd8592d8decc7e6e2b4f202103cc6da0c6d5450d63cbd90c83b506b01bc24766",
		"5cd3048f1768f85c46084e396c52d5398d46d166a9d5a38310453d0f2f6b6cc4",
		"17616bc52d71129e6b83afe464aa70b45771329423cdc33ccbf7ddd84a3359aa"},
	{"greedy", false, api.SpeechRequest{Text: "A greedy take.", Sampling: api.Sampling{Temperature: 0, TopP: 1, TopK: 0}, Seed: 3, MaxFrames: 10},
		"76543a515fabd5ac2ffe581ad6ee4925b75dc4f6fd5a09387d5a1b29ef38dcf7",
		"7d4fbda0d42706e72780e35afc47eddedee89991e0c000c35ab19f9157fd30f7",
		"6e8a570548aeb237759c0cb4fd4e4d80a3ed2aa442be0c0642ee7ecd6dd97631"},
	{"top-k 5", false, api.SpeechRequest{Text: "Few choices.", Sampling: api.Sampling{Temperature: 0.7, TopP: 1, TopK: 5}, Seed: 4, MaxFrames: 12},
		"1ebb519ca1cfb7e37af4d5f8b37bbfcd4fa16d00c80f74fb910011224504811c",
		"a4c31864aab5b0c95b1d94465d2a1aabd68e9a81afdb3b8ef9955946a898f6bc",
		"bdaf9bacb4bbe193d5596d3401b89810ccb0f9b1f7e592d0d51f64dd507d5da3"},
	{"fused experts, semantic head", true, api.SpeechRequest{Text: "Fused.", Sampling: api.DefaultSampling(), Seed: 5, MaxFrames: 12},
		"e12dc1b06f87a9b051cd7e429c694ba58ad54aa6ee02b2bc9b616bdd32a59959",
		"a74d74f4f0ed098c9ae228325cded50d681e558e6c98015fb78d9d9f8f66377c",
		"583bfc7aec674e33ea0a09cca1a3037331a5b00c3838862ce449a6f438780223"},
}

// logitsHash hashes the logits vectors a probe sees, in order.
type logitsHash struct {
	h       hash.Hash
	vectors int
}

func (l *logitsHash) reset() { l.h, l.vectors = sha256.New(), 0 }

// probe is an Options.Probe: it hashes the "logits.CB" vectors and ignores
// the other tensors.
func (l *logitsHash) probe(name string, values []float32) {
	if !strings.HasPrefix(name, "logits.") {
		return
	}
	l.vectors++
	fmt.Fprintf(l.h, "%s:", name)
	writeFloat32Bits(l.h, values)
}

func TestRecordedTakeHashes(t *testing.T) {
	dir := needTinyDir(t)
	print := os.Getenv("PROSCENIUM_PRINT_TAKE_HASHES") != ""
	var tap logitsHash
	open := func(dir string) api.Engine {
		eng, err := Open(context.Background(), dir, Options{Backend: CPU, Probe: tap.probe})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.Close() })
		return eng
	}
	engines := map[bool]api.Engine{false: open(dir)}
	for _, c := range recordedTakes {
		eng := engines[c.fused]
		if eng == nil {
			base, err := qwen3.TokenizerJSON()
			if err != nil {
				t.Fatal(err)
			}
			fdir := t.TempDir()
			if err := drama3.WriteTiny(fdir, drama3.TinyOptions{Seed: 2, BaseTokenizer: base, FusedExperts: true, SemanticHead: true}); err != nil {
				t.Fatal(err)
			}
			eng = open(fdir)
			engines[c.fused] = eng
		}
		var pcm []float32
		tap.reset()
		fin, err := eng.Synthesize(context.Background(), c.req, func(ev api.Event) {
			if ev.Kind == api.EventAudio {
				pcm = append(pcm, ev.Audio.PCM...)
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// Every frame draws once per codebook, each from one tapped vector;
		// a take that stopped drew end of speech once more.
		want := fin.Frames * eng.Info().Codebooks
		if fin.Reason == api.FinishStop {
			want++
		}
		if tap.vectors != want {
			t.Errorf("%s: the probe saw %d logits vectors, want %d (%d frames of %d codebooks)", c.name, tap.vectors, want, fin.Frames, eng.Info().Codebooks)
		}
		codes, logits, audio := hashCodes(fin.Codes), hex.EncodeToString(tap.h.Sum(nil)), hashPCM(pcm)
		if print {
			fmt.Printf("%s: %d frames %s\n\t%q,\n\t%q,\n\t%q},\n", c.name, fin.Frames, fin.Reason, codes, logits, audio)
			continue
		}
		if codes != c.codes || logits != c.logits || audio != c.pcm {
			t.Errorf("%s: codes %s logits %s pcm %s, recorded %s %s %s", c.name, codes, logits, audio, c.codes, c.logits, c.pcm)
		}
	}
	if print {
		t.Skip("PROSCENIUM_PRINT_TAKE_HASHES is set: the hashes were printed, not checked")
	}
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
	writeFloat32Bits(h, pcm)
	return hex.EncodeToString(h.Sum(nil))
}

// writeFloat32Bits writes the float32 bits of v, little endian.
func writeFloat32Bits(w io.Writer, v []float32) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	w.Write(b)
}
