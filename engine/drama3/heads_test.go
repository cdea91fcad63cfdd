package drama3

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestFeedbackRowHandComputed(t *testing.T) {
	// D = 2, two codebooks of 3 and 2 entries, vocabulary of 4 with
	// <|semantic:c|> at ids 1, 2, 3.
	h := &Heads{Dim: 2, SemanticTokens: []int{1, 2, 3}}
	embed := []float32{0, 0, 1, 2, 3, 4, 5, 6}
	codebooks := [][]float32{
		{10, 20, 30, 40, 50, 60},
		{0.5, -0.5, 7, 8},
	}
	dst := make([]float32, 2)
	if err := h.FeedbackRow(dst, []int{2, 1}, embed, codebooks); err != nil {
		t.Fatal(err)
	}
	// (E_text[3] + E0[2] + E1[1]) / sqrt(3) = (5+50+7, 6+60+8) / sqrt(3).
	s3 := float32(math.Sqrt(3))
	want := []float32{(5 + 50 + 7) / s3, (6 + 60 + 8) / s3}
	if dst[0] != want[0] || dst[1] != want[1] {
		t.Fatalf("feedback row %v, want %v", dst, want)
	}
	for _, bad := range [][]int{{3, 0}, {0, 2}, {-1, 0}, {0}} {
		if err := h.FeedbackRow(dst, bad, embed, codebooks); err == nil {
			t.Errorf("codes %v accepted", bad)
		}
	}
}

type tokenMap map[string]int

func (m tokenMap) TokenID(s string) (int, bool) { id, ok := m[s]; return id, ok }

func TestSemanticTokenIDs(t *testing.T) {
	ids, err := SemanticTokenIDs(tokenMap{"<|semantic:0|>": 7, "<|semantic:1|>": 9}, 2)
	if err != nil || ids[0] != 7 || ids[1] != 9 {
		t.Fatalf("ids %v, err %v", ids, err)
	}
	if _, err := SemanticTokenIDs(tokenMap{"<|semantic:0|>": 7}, 2); err == nil || !strings.Contains(err.Error(), "<|semantic:1|>") {
		t.Fatalf("missing token: error %v", err)
	}
}

// NewHeads takes the LM head rows of the semantic tokens then <|im_end|>
// (from the embedding when tied), the dedicated tensor when there is one,
// and refuses tokenizers that lack or misplace those tokens.
func TestNewHeads(t *testing.T) {
	base := baseTokenizer(t)
	for _, c := range []struct {
		name     string
		opts     TinyOptions
		dedicate bool
	}{
		{"tied LM head rows", TinyOptions{Seed: 3}, false},
		{"semantic_head tensor", TinyOptions{Seed: 3, FusedExperts: true, SemanticHead: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.opts.BaseTokenizer = base
			if err := WriteTiny(dir, c.opts); err != nil {
				t.Fatal(err)
			}
			ck, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			w := ck.Weights
			D, codes := w.Config.Text.HiddenSize, w.Config.Audio.SemanticCodebookSize
			// A made-up token map: semantic code c at id 2c+1, end of speech at 4.
			tok := tokenMap{EndOfSpeechToken: 4}
			for i := 0; i < codes; i++ {
				tok[SemanticToken(i)] = 2*i + 1
			}
			h, err := NewHeads(w, tok, nil)
			if err != nil {
				t.Fatal(err)
			}
			if h.Dim != D || h.Codes() != codes || len(h.Semantic) != (codes+1)*D || h.SemanticTokens[5] != 11 {
				t.Fatalf("heads dim %d codes %d rows %d", h.Dim, h.Codes(), len(h.Semantic)/D)
			}
			var want []float32
			if c.dedicate {
				want, _ = w.Float32(w.SemanticHead)
			} else {
				lm, _ := w.Float32(w.LMHead)
				for _, id := range []int{1, 3} {
					want = append(want, lm[id*D:(id+1)*D]...)
				}
				want = append(want, make([]float32, (codes-2)*D)...) // not compared
				for i := 2; i < codes; i++ {
					copy(want[i*D:], lm[(2*i+1)*D:(2*i+2)*D])
				}
				want = append(want, lm[4*D:5*D]...)
			}
			if !slices.Equal(h.Semantic, want) {
				t.Fatal("semantic head rows differ from the checkpoint's")
			}
			if !c.dedicate {
				// The caller's embedding serves a tied head: same rows.
				embed, _ := w.Float32(w.Embed)
				h2, err := NewHeads(w, tok, embed)
				if err != nil || !slices.Equal(h2.Semantic, h.Semantic) {
					t.Fatalf("heads from the given embedding differ (err %v)", err)
				}
				noEnd := tokenMap{}
				for k, v := range tok {
					noEnd[k] = v
				}
				delete(noEnd, EndOfSpeechToken)
				if _, err := NewHeads(w, noEnd, nil); err == nil || !strings.Contains(err.Error(), EndOfSpeechToken) {
					t.Errorf("no end-of-speech token: error %v", err)
				}
			}
			far := tokenMap{EndOfSpeechToken: 4}
			for i := 0; i < codes; i++ {
				far[SemanticToken(i)] = w.Config.Text.VocabSize + i
			}
			if _, err := NewHeads(w, far, nil); err == nil || !strings.Contains(err.Error(), "vocab_size") {
				t.Errorf("token ids beyond the vocabulary: error %v", err)
			}
		})
	}
}
