// Package tokenizer owns Hugging Face tokenizer.json tokenisation for the
// byte-level BPE models of the Qwen family: loading and validating the file,
// added/special tokens, the NFC normaliser, the Split pre-tokeniser (a
// hand-written scanner for the Qwen regex, regexp2 for any other pattern),
// BPE merges, the byte-level decoder, and WithAddedTokens, which writes an
// augmented tokenizer.json. Encode equals HF tokenizers'
// encode(text, add_special_tokens=False).ids. It knows nothing of prompts or
// models.
package tokenizer

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Tokenizer encodes text to token ids and decodes ids to text. It is safe for
// concurrent use.
type Tokenizer struct {
	vocab    map[string]int // BPE vocabulary by byte-level spelling
	idToken  []string       // id → token string as HF prints it; "" where unassigned
	idAdded  []int32        // id → index into added, or -1
	added    []AddedToken   // in file order
	byText   map[string]int // added token content → index into added
	raw      *addedMatcher  // added tokens matched in the raw text
	norm     *addedMatcher  // added tokens matched in the normalised text
	nfc      bool
	preSteps []preStep
	bpe      *bpeModel
}

func (t *Tokenizer) normalize(s string) string {
	if t.nfc {
		return nfc(s)
	}
	return s
}

// Encode returns the ids of text, with added tokens (such as "<|im_start|>")
// written in the text recognised as single tokens. It equals HF's
// encode(text, add_special_tokens=False).ids. text must be valid UTF-8.
func (t *Tokenizer) Encode(text string) ([]int, error) {
	return t.encode(text, true)
}

// EncodeOrdinary returns the ids of text with no added-token matching: a
// "<|im_start|>" in it is encoded as the characters it is made of.
func (t *Tokenizer) EncodeOrdinary(text string) ([]int, error) {
	return t.encode(text, false)
}

func (t *Tokenizer) encode(text string, withAdded bool) ([]int, error) {
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("text is not valid UTF-8 (at byte %d)", invalidUTF8Offset(text))
	}
	ids := make([]int, 0, len(text)/3+4)
	if !withAdded {
		return t.appendText(ids, t.normalize(text)), nil
	}
	for _, p := range t.raw.split(nil, text) {
		if p.tok != nil {
			ids = append(ids, p.tok.ID)
			continue
		}
		for _, q := range t.norm.split(nil, t.normalize(p.text)) {
			if q.tok != nil {
				ids = append(ids, q.tok.ID)
			} else {
				ids = t.appendText(ids, q.text)
			}
		}
	}
	return ids, nil
}

// appendText pre-tokenises normalised text and appends the BPE ids of each piece.
func (t *Tokenizer) appendText(ids []int, s string) []int {
	if s == "" {
		return ids
	}
	if len(t.preSteps) == 1 {
		if _, ok := t.preSteps[0].(qwenSplit); ok {
			// The common case, without a slice of pieces.
			for i := 0; i < len(s); {
				n := qwenMatch(s, i)
				ids = t.bpe.appendWord(ids, s[i:i+n])
				i += n
			}
			return ids
		}
	}
	pieces := []string{s}
	for _, step := range t.preSteps {
		next := make([]string, 0, len(pieces)*2)
		for _, p := range pieces {
			next = step.appendPieces(next, p)
		}
		pieces = next
	}
	for _, p := range pieces {
		ids = t.bpe.appendWord(ids, p)
	}
	return ids
}

func invalidUTF8Offset(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, w := utf8.DecodeRuneInString(s[i:]); w == 1 {
				return i
			}
		}
	}
	return len(s)
}

// Decode returns the text of ids (special tokens included), as HF's
// decode(ids, skip_special_tokens=False) with the ByteLevel decoder: bytes
// that do not form valid UTF-8 become U+FFFD.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	var buf []byte
	for i, id := range ids {
		tok, ok := t.Token(id)
		if !ok {
			return "", fmt.Errorf("id %d (position %d) is not a token of this tokenizer", id, i)
		}
		buf = appendTokenBytes(buf, tok)
	}
	return lossyUTF8(buf), nil
}

// Token returns the token string of id: an added token's content, or a
// vocabulary symbol in the byte-level alphabet.
func (t *Tokenizer) Token(id int) (string, bool) {
	if id < 0 || id >= len(t.idToken) || t.idToken[id] == "" {
		return "", false
	}
	return t.idToken[id], true
}

// TokenID returns the id of an added token's content or of a vocabulary
// symbol (byte-level spelling).
func (t *Tokenizer) TokenID(s string) (int, bool) {
	if i, ok := t.byText[s]; ok {
		return t.added[i].ID, true
	}
	id, ok := t.vocab[s]
	return id, ok
}

// IsSpecial reports whether id is an added token marked special.
func (t *Tokenizer) IsSpecial(id int) bool {
	a, ok := t.Added(id)
	return ok && a.Special
}

// Added returns the added token with this id.
func (t *Tokenizer) Added(id int) (AddedToken, bool) {
	if id < 0 || id >= len(t.idAdded) || t.idAdded[id] < 0 {
		return AddedToken{}, false
	}
	return t.added[t.idAdded[id]], true
}

// AddedTokens returns the added tokens in id order.
func (t *Tokenizer) AddedTokens() []AddedToken {
	out := append([]AddedToken(nil), t.added...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// VocabSize is one more than the largest id (vocabulary or added token): the
// least number of rows an embedding table for this tokenizer needs.
func (t *Tokenizer) VocabSize() int { return len(t.idToken) }

// FindAdded returns the first added token that Encode would recognise in
// text and its byte offset, or ok = false. Tokens matched in the raw text are
// looked for in text; normalised ones in the normalised text (the offset is
// then in that text, the same for text already in NFC). Prompt builders use it
// to refuse structural tokens in user text.
func (t *Tokenizer) FindAdded(text string) (tok AddedToken, offset int, ok bool) {
	if k, at := t.raw.first(text); k >= 0 {
		tok, offset, ok = *t.raw.toks[k], at, true
	}
	if len(t.norm.toks) > 0 {
		if k, at := t.norm.first(t.normalize(text)); k >= 0 && (!ok || at < offset) {
			tok, offset, ok = *t.norm.toks[k], at, true
		}
	}
	return tok, offset, ok
}
