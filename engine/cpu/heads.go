package cpu

import (
	"fmt"
	"math"

	"proscenium/engine/drama3"
)

// This file holds the two ends of a frame that sit between the backbone and
// the tower (MODEL.md §3, working definitions in docs/MODEL.md "Tower,
// semantic head, feedback, sampler"):
//
//   - the semantic head: logits over the semantic codes plus end of speech
//     from the last backbone row's final-norm hidden state, from a dedicated
//     semantic_head tensor or else the LM head rows of <|semantic:0|> …
//     <|semantic:N−1|> and <|im_end|>;
//   - the feedback row: the next backbone input of an audio frame,
//     (E_text[<|semantic:c0|>] + Σ_i E_cb_i[c_i]) / sqrt(codebooks + 1),
//     summed in float32 in that order, then divided by float32(sqrt(n+1)).

// TokenIDs looks up the id of a token string (the tokenizer).
type TokenIDs interface {
	TokenID(s string) (int, bool)
}

// SemanticToken is the token string of semantic code c.
func SemanticToken(c int) string { return fmt.Sprintf("<|semantic:%d|>", c) }

// EndOfSpeechToken is the LM head row that ends the speech.
const EndOfSpeechToken = "<|im_end|>"

// AudioHeads is the semantic head and what the feedback row reads.
type AudioHeads struct {
	Dim            int
	Semantic       []float32   // [codes + 1, Dim]: semantic codes, then end of speech
	SemanticTokens []int       // token id of <|semantic:c|> for every code c
	TextEmbed      []float32   // [vocab, Dim]: the backbone's embed_tokens
	Codebooks      [][]float32 // codebook i: [entries_i, Dim]
}

// SemanticTokenIDs looks up <|semantic:c|> for c in [0, codes).
func SemanticTokenIDs(tok TokenIDs, codes int) ([]int, error) {
	ids := make([]int, codes)
	for c := range ids {
		id, ok := tok.TokenID(SemanticToken(c))
		if !ok {
			return nil, fmt.Errorf("tokenizer has no token %s", SemanticToken(c))
		}
		ids[c] = id
	}
	return ids, nil
}

// NewAudioHeads binds the semantic head from w (the dedicated tensor when the
// checkpoint has one, else the LM head rows of the semantic tokens and
// <|im_end|>), reusing the already-loaded text embedding and codebook tables.
func NewAudioHeads(w *drama3.Weights, tok TokenIDs, textEmbed []float32, codebooks [][]float32) (*AudioHeads, error) {
	cfg := w.Config
	D, codes := cfg.Text.HiddenSize, cfg.Audio.SemanticCodebookSize
	ids, err := SemanticTokenIDs(tok, codes)
	if err != nil {
		return nil, err
	}
	h := &AudioHeads{Dim: D, SemanticTokens: ids, TextEmbed: textEmbed, Codebooks: codebooks}
	if len(textEmbed) != cfg.Text.VocabSize*D {
		return nil, fmt.Errorf("audio heads: text embedding has %d values, want %d × %d", len(textEmbed), cfg.Text.VocabSize, D)
	}
	for _, id := range ids {
		if id >= cfg.Text.VocabSize {
			return nil, fmt.Errorf("audio heads: token id %d of a semantic token is outside text_config.vocab_size %d", id, cfg.Text.VocabSize)
		}
	}
	if len(codebooks) != cfg.Audio.NumCodebooks {
		return nil, fmt.Errorf("audio heads: %d codebook tables, config has %d codebooks", len(codebooks), cfg.Audio.NumCodebooks)
	}
	for i, cb := range codebooks {
		if len(cb) != cfg.Audio.CodebookEntries(i)*D {
			return nil, fmt.Errorf("audio heads: codebook %d table has %d values, want %d × %d", i, len(cb), cfg.Audio.CodebookEntries(i), D)
		}
	}

	if w.SemanticHead != nil {
		if h.Semantic, err = w.Float32(w.SemanticHead); err != nil {
			return nil, err
		}
		return h, nil
	}
	end, ok := tok.TokenID(EndOfSpeechToken)
	if !ok {
		return nil, fmt.Errorf("tokenizer has no token %s (the semantic head's end of speech)", EndOfSpeechToken)
	}
	if end >= cfg.Text.VocabSize {
		return nil, fmt.Errorf("audio heads: %s id %d is outside text_config.vocab_size %d", EndOfSpeechToken, end, cfg.Text.VocabSize)
	}
	if w.LMHead == nil {
		return nil, fmt.Errorf("audio heads: no semantic_head tensor and no LM head to take its rows from")
	}
	// The tied LM head is the embedding already in memory; an untied one is
	// read once and only the needed rows are kept.
	lm := textEmbed
	if w.LMHead != w.Embed {
		if lm, err = w.Float32(w.LMHead); err != nil {
			return nil, err
		}
	}
	h.Semantic = make([]float32, (codes+1)*D)
	GatherRows(h.Semantic, lm, append(append([]int(nil), ids...), end), D)
	return h, nil
}

// Codes is the number of semantic codes (end of speech is index Codes).
func (h *AudioHeads) Codes() int { return len(h.SemanticTokens) }

// SemanticLogits writes the Codes()+1 logits of one final-norm hidden state.
func (h *AudioHeads) SemanticLogits(dst, hidden []float32) {
	MatVec(dst, h.Semantic, hidden, h.Codes()+1, h.Dim)
}

// FeedbackRow writes the backbone input row of a frame's codes into dst.
func (h *AudioHeads) FeedbackRow(dst []float32, codes []int) error {
	D := h.Dim
	if len(codes) != len(h.Codebooks) {
		return fmt.Errorf("feedback: %d codes, the model has %d codebooks", len(codes), len(h.Codebooks))
	}
	for i, c := range codes {
		if c < 0 || c*D >= len(h.Codebooks[i]) {
			return fmt.Errorf("feedback: code %d outside codebook %d's [0, %d)", c, i, len(h.Codebooks[i])/D)
		}
	}
	tok := h.SemanticTokens[codes[0]]
	copy(dst[:D], h.TextEmbed[tok*D:(tok+1)*D])
	for i, c := range codes {
		Add(dst[:D], h.Codebooks[i][c*D:(c+1)*D])
	}
	div := float32(math.Sqrt(float64(len(codes) + 1)))
	for i := range dst[:D] {
		dst[i] /= div
	}
	return nil
}
