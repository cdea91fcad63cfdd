package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   map[string]int  `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
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

// parseMerges reads model.merges in either spelling HF writes: ["a b", …]
// (tokenizers < 0.20) or [["a", "b"], …].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	if trimmed[0] != '[' {
		return nil, fmt.Errorf("model.merges is not an array")
	}
	rest := bytes.TrimSpace(trimmed[1:])
	if len(rest) > 0 && rest[0] == '[' {
		var pairs [][]string
		if err := json.Unmarshal(trimmed, &pairs); err != nil {
			return nil, fmt.Errorf("model.merges: %v", err)
		}
		out := make([][2]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return nil, fmt.Errorf("model.merges[%d] has %d strings, want 2", i, len(p))
			}
			out[i] = [2]string{p[0], p[1]}
		}
		return out, nil
	}
	var lines []string
	if err := json.Unmarshal(trimmed, &lines); err != nil {
		return nil, fmt.Errorf("model.merges: %v", err)
	}
	out := make([][2]string, len(lines))
	for i, l := range lines {
		a, b, ok := strings.Cut(l, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("model.merges[%d] = %q is not two symbols separated by one space", i, l)
		}
		out[i] = [2]string{a, b}
	}
	return out, nil
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}
