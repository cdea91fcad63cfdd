package tokenizer

import (
	"bytes"
	"encoding/json"
)

// fileJSON is the part of a Hugging Face tokenizer.json that encoding reads.
// truncation, padding and post_processor are not read: Encode is HF's
// encode(text, add_special_tokens=False) without truncation or padding.
type fileJSON struct {
	AddedTokens  []addedTokenJSON `json:"added_tokens"`
	Normalizer   json.RawMessage  `json:"normalizer"`
	PreTokenizer json.RawMessage  `json:"pre_tokenizer"`
	Decoder      json.RawMessage  `json:"decoder"`
	Model        *modelJSON       `json:"model"`
}

type addedTokenJSON struct {
	ID         *int    `json:"id"`
	Content    *string `json:"content"`
	SingleWord bool    `json:"single_word"`
	LStrip     bool    `json:"lstrip"`
	RStrip     bool    `json:"rstrip"`
	Normalized *bool   `json:"normalized"`
	Special    bool    `json:"special"`
}

type modelJSON struct {
	Type                    string         `json:"type"`
	Dropout                 *float64       `json:"dropout"`
	UnkToken                *string        `json:"unk_token"`
	ContinuingSubwordPrefix *string        `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string        `json:"end_of_word_suffix"`
	IgnoreMerges            bool           `json:"ignore_merges"`
	Vocab                   map[string]int `json:"-"` // read by jsonScanner.vocab
	HasMerges               bool           `json:"-"` // merges were present (jsonScanner.merges)
}

// componentJSON is a normaliser, pre-tokeniser or decoder entry.
type componentJSON struct {
	Type           string          `json:"type"`
	Normalizers    []componentJSON `json:"normalizers"`
	Pretokenizers  []componentJSON `json:"pretokenizers"`
	Decoders       []componentJSON `json:"decoders"`
	Pattern        *patternJSON    `json:"pattern"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace bool            `json:"add_prefix_space"`
	UseRegex       *bool           `json:"use_regex"`
}

type patternJSON struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}
