package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"proscenium/internal/regular"
)

// This file turns a tokenizer.json into a Tokenizer and checks everything it
// relies on: the BPE model, the added tokens, the normaliser and decoder (the
// pre-tokeniser is in pretokenize.go).

// MaxFileBytes bounds the tokenizer.json LoadFile reads (Qwen's is 11 MB).
const MaxFileBytes = 256 << 20

// LoadFile reads and parses a tokenizer.json: a regular file (a FIFO or a
// device is refused before reading) of at most MaxFileBytes.
func LoadFile(path string) (*Tokenizer, error) {
	data, err := regular.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse builds a Tokenizer from the bytes of a tokenizer.json. Anything it
// does not implement exactly (another model type, normaliser, decoder or
// pre-tokeniser behaviour) is an error naming the key, never a silent
// approximation.
func Parse(data []byte) (*Tokenizer, error) {
	f, merges, err := decodeFile(data)
	if err != nil {
		return nil, err
	}
	if f.Model == nil {
		return nil, fmt.Errorf("tokenizer.json: no model")
	}
	t := &Tokenizer{}
	if err := t.parseModel(f.Model, merges); err != nil {
		return nil, err
	}
	if err := t.parseAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	if t.nfc, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	t.buildMatchers()
	if t.preSteps, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := checkDecoder(f.Decoder); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Tokenizer) parseModel(m *modelJSON, merges [][2][]byte) error {
	if m.Type != "BPE" && !(m.Type == "" && m.HasMerges) {
		return fmt.Errorf("model.type %q is not supported (only BPE)", m.Type)
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		return fmt.Errorf("model.dropout %v is not supported", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return fmt.Errorf("model.continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return fmt.Errorf("model.end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	}
	if len(m.Vocab) == 0 {
		return fmt.Errorf("model.vocab is missing or empty")
	}
	t.vocab = m.Vocab
	bpe := &bpeModel{merges: make(map[uint64]mergeResult, len(merges)), cache: make(map[string][]int32)}
	for b := 0; b < 256; b++ {
		sym := string(byteToRune[b])
		id, ok := m.Vocab[sym]
		if !ok {
			return fmt.Errorf("model.vocab lacks the byte-level symbol %q (byte 0x%02X): not a byte-level BPE vocabulary", sym, b)
		}
		bpe.byteID[b] = int32(id)
	}
	if len(merges) >= 1<<31-1 {
		return fmt.Errorf("model.merges: too many merges (%d)", len(merges))
	}
	var joined []byte
	for i, p := range merges {
		joined = append(append(joined[:0], p[0]...), p[1]...)
		a, okA := m.Vocab[string(p[0])]
		b, okB := m.Vocab[string(p[1])]
		c, okC := m.Vocab[string(joined)]
		switch {
		case !okA:
			return fmt.Errorf("model.merges[%d]: symbol %q is not in model.vocab", i, p[0])
		case !okB:
			return fmt.Errorf("model.merges[%d]: symbol %q is not in model.vocab", i, p[1])
		case !okC:
			return fmt.Errorf("model.merges[%d]: merged symbol %q is not in model.vocab", i, joined)
		}
		// A repeated pair keeps its last rank, as HF's HashMap collect does.
		bpe.merges[mergeKey(int32(a), int32(b))] = mergeResult{rank: int32(i), id: int32(c)}
	}
	if m.IgnoreMerges {
		bpe.wholeWord = m.Vocab
	}
	t.bpe = bpe
	return nil
}

// maxIDSlack bounds ids relative to the number of entries, so that a corrupt
// id cannot make the id table huge.
const maxIDSlack = 1 << 16

func (t *Tokenizer) parseAdded(entries []addedTokenJSON) error {
	limit := len(t.vocab) + len(entries) + maxIDSlack
	maxID := -1
	for sym, id := range t.vocab {
		if id < 0 || id >= limit {
			return fmt.Errorf("model.vocab[%q] = %d is out of range [0, %d)", sym, id, limit)
		}
		maxID = max(maxID, id)
	}
	t.byText = make(map[string]int, len(entries))
	t.added = make([]AddedToken, len(entries))
	for i, e := range entries {
		switch {
		case e.ID == nil:
			return fmt.Errorf("added_tokens[%d]: no id", i)
		case e.Content == nil:
			return fmt.Errorf("added_tokens[%d]: no content", i)
		case *e.Content == "":
			return fmt.Errorf("added_tokens[%d]: empty content", i)
		case !utf8.ValidString(*e.Content):
			return fmt.Errorf("added_tokens[%d]: content is not valid UTF-8", i)
		case *e.ID < 0 || *e.ID >= limit:
			return fmt.Errorf("added_tokens[%d] %q: id %d is out of range [0, %d)", i, *e.Content, *e.ID, limit)
		}
		if j, dup := t.byText[*e.Content]; dup {
			return fmt.Errorf("added_tokens[%d]: content %q repeats added_tokens[%d]", i, *e.Content, j)
		}
		normalized := !e.Special // HF's default when the key is absent
		if e.Normalized != nil {
			normalized = *e.Normalized
		}
		t.added[i] = AddedToken{ID: *e.ID, Content: *e.Content, Special: e.Special, Normalized: normalized,
			SingleWord: e.SingleWord, LStrip: e.LStrip, RStrip: e.RStrip}
		t.byText[*e.Content] = i
		maxID = max(maxID, *e.ID)
	}
	t.idToken = make([]string, maxID+1)
	t.idAdded = make([]int32, maxID+1)
	for i := range t.idAdded {
		t.idAdded[i] = -1
	}
	named, dupID := make([]bool, maxID+1), -1
	for sym, id := range t.vocab {
		if named[id] && (dupID < 0 || id < dupID) {
			dupID = id
		}
		named[id] = true
		t.idToken[id] = sym
	}
	if dupID >= 0 { // which symbol an id decodes to would depend on map order
		var syms []string
		for sym, id := range t.vocab {
			if id == dupID {
				syms = append(syms, sym)
			}
		}
		slices.Sort(syms)
		return fmt.Errorf("model.vocab: id %d is given to %d symbols %q (an id names one symbol)", dupID, len(syms), syms)
	}
	for i, a := range t.added {
		if j := t.idAdded[a.ID]; j >= 0 {
			return fmt.Errorf("added_tokens[%d] %q: id %d is already added_tokens[%d] %q", i, a.Content, a.ID, j, t.added[j].Content)
		}
		t.idAdded[a.ID] = int32(i)
		t.idToken[a.ID] = a.Content
	}
	return nil
}

// buildMatchers makes the raw-text and normalised-text added-token matchers.
// Normalised tokens are matched by their normalised content, as in HF.
func (t *Tokenizer) buildMatchers() {
	var raw, normed []*AddedToken
	for i := range t.added {
		if t.added[i].Normalized {
			normed = append(normed, &t.added[i])
		} else {
			raw = append(raw, &t.added[i])
		}
	}
	t.raw = newAddedMatcher(raw, func(a *AddedToken) string { return a.Content })
	t.norm = newAddedMatcher(normed, func(a *AddedToken) string { return t.normalize(a.Content) })
}

// parseNormalizer accepts no normaliser, NFC, or a Sequence of NFC.
func parseNormalizer(raw json.RawMessage) (nfc bool, err error) {
	if isNull(raw) {
		return false, nil
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return false, fmt.Errorf("normalizer: %v", err)
	}
	list := []componentJSON{c}
	if c.Type == "Sequence" {
		list = c.Normalizers
	}
	for _, n := range list {
		if n.Type != "NFC" {
			return false, fmt.Errorf("normalizer %q is not supported (only NFC)", n.Type)
		}
		nfc = true
	}
	return nfc, nil
}

// checkDecoder accepts the ByteLevel decoder (alone or as a one-entry
// Sequence), the only one Decode implements.
func checkDecoder(raw json.RawMessage) error {
	if isNull(raw) {
		return fmt.Errorf("decoder is missing (want ByteLevel)")
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("decoder: %v", err)
	}
	if c.Type == "Sequence" && len(c.Decoders) == 1 {
		c = c.Decoders[0]
	}
	if c.Type != "ByteLevel" {
		return fmt.Errorf("decoder %q is not supported (only ByteLevel)", c.Type)
	}
	return nil
}
