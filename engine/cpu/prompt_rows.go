package cpu

import (
	"fmt"

	"proscenium/engine/drama3"
)

// PromptRows turns a prompt's rows into backbone rows: a text row by its
// token id; an audio row (a reference frame) with the feedback row of its
// codes as its input embedding, written by feedback into dim values (the
// heads' FeedbackRow: MODEL.md §3's formula, as for generated frames).
func PromptRows(p drama3.Prompt, dim int, feedback func(dst []float32, codes []int) error) ([]BackboneRow, error) {
	rows := make([]BackboneRow, len(p))
	var emb []float32
	if n := p.AudioRows(); n > 0 {
		emb = make([]float32, n*dim)
	}
	for i, r := range p {
		rows[i].Token = r.Token
		if r.Codes == nil {
			continue
		}
		e := emb[:dim:dim]
		emb = emb[dim:]
		if err := feedback(e, r.Codes); err != nil {
			return nil, fmt.Errorf("prompt row %d: %w", i, err)
		}
		rows[i].Embedding = e
	}
	return rows, nil
}
