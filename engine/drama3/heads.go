package drama3

import (
	"fmt"
	"math"
)

// This file holds the two ends of a frame that sit between the backbone and
// the tower (MODEL.md §3, working definitions in docs/MODEL.md "Tower,
// semantic head, feedback, sampler"), for every backend:
//
//   - the semantic head: logits over the semantic codes plus end of speech
//     (index Codes(), the last) from the last backbone row's final-norm
//     hidden state, from a dedicated semantic_head tensor or else the LM head
//     rows of <|semantic:0|> … <|semantic:N−1|> and <|im_end|>;
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

// Heads is the semantic head in float32 and the token of each semantic code
// (whose text embedding starts the feedback row).
type Heads struct {
	Dim            int
	Semantic       []float32 // [Codes()+1, Dim]: semantic codes, then end of speech
	SemanticTokens []int     // token id of <|semantic:c|> for every code c
}

// Codes is the number of semantic codes; end of speech is logit index Codes().
func (h *Heads) Codes() int { return len(h.SemanticTokens) }

// NewHeads binds the semantic head from w: the dedicated tensor when the
// checkpoint has one, else the LM head rows of the semantic tokens and
// <|im_end|>. embed, when not nil, is the float32 embed_tokens the caller
// already holds: a tied LM head's rows are taken from it instead of being
// read again.
func NewHeads(w *Weights, tok TokenIDs, embed []float32) (*Heads, error) {
	cfg := w.Config
	D, codes := cfg.Text.HiddenSize, cfg.Audio.SemanticCodebookSize
	ids, err := SemanticTokenIDs(tok, codes)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if id >= cfg.Text.VocabSize {
			return nil, fmt.Errorf("semantic head: token id %d of a semantic token is outside text_config.vocab_size %d", id, cfg.Text.VocabSize)
		}
	}
	h := &Heads{Dim: D, SemanticTokens: ids}
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
		return nil, fmt.Errorf("semantic head: %s id %d is outside text_config.vocab_size %d", EndOfSpeechToken, end, cfg.Text.VocabSize)
	}
	if w.LMHead == nil {
		return nil, fmt.Errorf("semantic head: no semantic_head tensor and no LM head to take its rows from")
	}
	lm := embed
	if w.LMHead != w.Embed || lm == nil {
		if lm, err = w.Float32(w.LMHead); err != nil {
			return nil, err
		}
	}
	if len(lm) != cfg.Text.VocabSize*D {
		return nil, fmt.Errorf("semantic head: LM head has %d values, want text_config.vocab_size %d × hidden_size %d", len(lm), cfg.Text.VocabSize, D)
	}
	h.Semantic = make([]float32, 0, (codes+1)*D)
	for _, id := range append(append([]int(nil), ids...), end) {
		h.Semantic = append(h.Semantic, lm[id*D:(id+1)*D]...)
	}
	return h, nil
}

// FeedbackRow writes the backbone input row of a frame's codes into dst
// [Dim], reading the float32 text embedding [vocab, Dim] and codebook tables
// [entries_i, Dim]: the reference definition a device backend must match.
func (h *Heads) FeedbackRow(dst []float32, codes []int, textEmbed []float32, codebooks [][]float32) error {
	D := h.Dim
	if len(codes) != len(codebooks) {
		return fmt.Errorf("feedback: %d codes, the model has %d codebooks", len(codes), len(codebooks))
	}
	for i, c := range codes {
		if c < 0 || c*D >= len(codebooks[i]) {
			return fmt.Errorf("feedback: code %d outside codebook %d's [0, %d)", c, i, len(codebooks[i])/D)
		}
	}
	if codes[0] >= len(h.SemanticTokens) {
		return fmt.Errorf("feedback: semantic code %d outside [0, %d)", codes[0], len(h.SemanticTokens))
	}
	tok := h.SemanticTokens[codes[0]]
	copy(dst[:D], textEmbed[tok*D:(tok+1)*D])
	for i, c := range codes {
		row := codebooks[i][c*D : (c+1)*D]
		for j := range dst[:D] {
			dst[j] += row[j]
		}
	}
	div := float32(math.Sqrt(float64(len(codes) + 1)))
	for i := range dst[:D] {
		dst[i] /= div
	}
	return nil
}
