package open

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"proscenium/engine/api"
	"proscenium/engine/audio/decode"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// demoReference is the decode package's test recording encoded by the demo
// model's codec: frames × codebooks.
func demoReference(t *testing.T, dir string) [][]int {
	t.Helper()
	enc, err := cpu.LoadCodecEncoderFile(filepath.Join(dir, "codec.pth"), drama3.CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := readTestReference()
	if err != nil {
		t.Fatal(err)
	}
	res, err := enc.Encode(ref.Samples)
	if err != nil {
		t.Fatal(err)
	}
	nb := enc.Geometry().Codebooks
	codes := make([][]int, res.Frames)
	for f := range codes {
		codes[f] = make([]int, nb)
		for i := range codes[f] {
			codes[f][i] = int(res.Codes[f*nb+i])
		}
	}
	return codes
}

func readTestReference() (*decode.Reference, error) {
	b, err := os.ReadFile(filepath.Join("..", "audio", "decode", "testdata", "ref.flac"))
	if err != nil {
		return nil, err
	}
	return decode.ReadReference(b)
}

// referenceTakeRuns counts TestReferenceTake's runs in this process.
var referenceTakeRuns int

// A take with a reference voice: reproducible for a seed (the second take
// starting from the voice cache, prefilling only the script), other than
// the same take in the default voice; bad references are invalid requests.
func TestReferenceTake(t *testing.T) {
	eng, dir := openTiny(t)
	codes := demoReference(t, dir)
	// The engine is shared by the package's tests and keeps its voice cache:
	// a transcript of this run's own makes its first take the voice's first
	// under -count N too.
	referenceTakeRuns++
	transcript := fmt.Sprintf("The quick brown fox, run %d.", referenceTakeRuns)
	refs := []api.Reference{{Transcript: transcript, Codes: codes}}
	voicesBefore := eng.Stats().Memory.VoiceEntries
	var last *api.Finish
	run := func(refs []api.Reference) [][]int {
		req := api.SpeechRequest{Text: "Again.", Sampling: api.DefaultSampling(), Seed: 3, MaxFrames: 6, References: refs}
		fin, err := eng.Synthesize(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fin.StagesS[drama3.StagePrefill] <= 0 {
			t.Errorf("no prefill time")
		}
		last = fin
		return fin.Codes
	}
	c1 := run(refs)
	if last.VoiceCached || last.PrefillRows != last.PromptRows || last.PromptRows <= len(codes) {
		t.Fatalf("first take in a voice: cached %v, %d of %d rows prefilled (%d reference frames)", last.VoiceCached, last.PrefillRows, last.PromptRows, len(codes))
	}
	c2 := run(refs)
	if !last.VoiceCached || last.PrefillRows >= last.PromptRows-len(codes) {
		t.Fatalf("second take in a voice: cached %v, %d of %d rows prefilled (%d reference frames)", last.VoiceCached, last.PrefillRows, last.PromptRows, len(codes))
	}
	if m := eng.Stats().Memory; m.VoiceEntries != voicesBefore+1 || m.VoiceCache <= 0 || m.VoiceCache > m.VoiceCacheCap {
		t.Fatalf("memory readout after a voice was cached: %+v", m)
	}
	if !reflect.DeepEqual(c1, c2) {
		t.Fatal("the same seed and reference gave a different take")
	}
	if reflect.DeepEqual(c1, run(nil)) {
		t.Fatal("the reference changed nothing")
	}
	bad := [][]api.Reference{
		{{Transcript: " ", Codes: codes}},
		{{Transcript: "Hi.", Codes: [][]int{{1, 2, 3}}}},
		{{Transcript: "Hi.", Codes: nil}},
	}
	for i, r := range bad {
		req := api.SpeechRequest{Text: "Again.", Sampling: api.DefaultSampling(), Seed: 3, MaxFrames: 6, References: r}
		if _, err := eng.Synthesize(context.Background(), req, nil); !errors.Is(err, api.ErrInvalidRequest) || !strings.Contains(err.Error(), "reference 0") {
			t.Errorf("bad reference %d: %v", i, err)
		}
	}
}
