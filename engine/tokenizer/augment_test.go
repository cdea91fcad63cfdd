package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// drama3Tokens is the list make-tiny adds: semantic codes, speakers and the
// three structural markers.
func drama3Tokens() []string {
	var toks []string
	for i := 0; i < 4096; i++ {
		toks = append(toks, fmt.Sprintf("<|semantic:%d|>", i))
	}
	for i := 0; i < 16; i++ {
		toks = append(toks, fmt.Sprintf("<|speaker:%d|>", i))
	}
	return append(toks, "<|voice|>", "<|text|>", "<|interleave|>")
}

func TestWithAddedTokensQwen(t *testing.T) {
	base, baseJSON := loadQwen(t)
	toks := drama3Tokens()
	out, err := WithAddedTokens(baseJSON, toks)
	if err != nil {
		t.Fatal(err)
	}
	again, err := WithAddedTokens(baseJSON, toks)
	if err != nil || !bytes.Equal(out, again) {
		t.Fatalf("not deterministic (err %v)", err)
	}
	aug, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	// Qwen3's largest id is <|...|> 151668; new ids follow it in order.
	if base.VocabSize() != 151669 {
		t.Fatalf("base VocabSize = %d, want 151669", base.VocabSize())
	}
	for i, s := range toks {
		id, ok := aug.TokenID(s)
		if !ok || id != 151669+i || !aug.IsSpecial(id) {
			t.Fatalf("TokenID(%q) = %d, %v (special %v), want %d special", s, id, ok, aug.IsSpecial(id), 151669+i)
		}
	}
	if aug.VocabSize() != 151669+len(toks) {
		t.Errorf("VocabSize = %d, want %d", aug.VocabSize(), 151669+len(toks))
	}

	// Everything but added_tokens is unchanged, and the old entries come first.
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(baseJSON, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatal(err)
	}
	for k := range a {
		if k != "added_tokens" && !bytes.Equal(a[k], b[k]) {
			t.Errorf("key %q changed", k)
		}
	}
	var oldAdded, newAdded []map[string]any
	json.Unmarshal(a["added_tokens"], &oldAdded)
	json.Unmarshal(b["added_tokens"], &newAdded)
	if !reflect.DeepEqual(newAdded[:len(oldAdded)], oldAdded) || len(newAdded) != len(oldAdded)+len(toks) {
		t.Errorf("added_tokens: old entries changed or wrong count %d", len(newAdded))
	}
	want := map[string]any{"id": 151669.0, "content": "<|semantic:0|>", "single_word": false,
		"lstrip": false, "rstrip": false, "normalized": false, "special": true}
	if !reflect.DeepEqual(newAdded[len(oldAdded)], want) {
		t.Errorf("first new entry = %v, want %v", newAdded[len(oldAdded)], want)
	}
	// Byte for byte, the output is the base with one run of bytes inserted
	// after the last old entry.
	at, _, err := addedTokensEnd(baseJSON)
	if err != nil {
		t.Fatal(err)
	}
	inserted := len(out) - len(baseJSON)
	if at < bytes.Index(baseJSON, []byte(`"<|file_sep|>"`)) || inserted <= 0 ||
		!bytes.Equal(out[:at], baseJSON[:at]) || !bytes.Equal(out[at+inserted:], baseJSON[at:]) {
		t.Errorf("output is not the base plus one inserted run at byte %d", at)
	}

	// The new tokens are matched whole; the old behaviour is unchanged.
	ids, err := aug.Encode("<|speaker:1|>Hi<|semantic:4095|><|voice|>")
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []int{151669 + 4096 + 1, 13048, 151669 + 4095, 151669 + 4096 + 16}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("Encode = %v, want %v", ids, wantIDs)
	}
	for _, c := range loadGolden(t) {
		if strings.Contains(c.Text, "<|speaker") {
			continue // now an added token
		}
		if ids, _ := aug.Encode(c.Text); !slices.Equal(ids, c.IDs) {
			t.Errorf("augmented Encode(%q) = %v, want %v", c.Text, ids, c.IDs)
		}
	}
}

func TestWithAddedTokensErrors(t *testing.T) {
	_, baseJSON := loadQwen(t)
	cases := []struct {
		toks []string
		want string
	}{
		{[]string{"<|a|>", ""}, "token 1 is empty"},
		{[]string{"<|\xff|>"}, "token 0 \"<|\\xff|>\" is not valid UTF-8"},
		{[]string{"<|a|>", "<|b|>", "<|a|>"}, `token 2 "<|a|>" repeats token 0`},
		{[]string{"<|im_end|>"}, `"<|im_end|>" is already in the tokenizer (id 151645)`},
		{[]string{"hello"}, `"hello" is already in the tokenizer`},
	}
	for _, c := range cases {
		_, err := WithAddedTokens(baseJSON, c.toks)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WithAddedTokens(%q) error = %v, want %q", c.toks, err, c.want)
		}
	}
	if _, err := WithAddedTokens([]byte(`{"model":`), []string{"x"}); err == nil {
		t.Error("truncated base accepted")
	}
}

// A base with an empty added_tokens array gets its first entry without a
// leading comma.
func TestWithAddedTokensEmptyList(t *testing.T) {
	base := smallTokenizerJSON(t, func(m map[string]any) { m["added_tokens"] = []any{} })
	out, err := WithAddedTokens(base, []string{"<|x|>", "<|y|>"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	next := 256 + 1 // 256 byte symbols + one merge
	for i, s := range []string{"<|x|>", "<|y|>"} {
		if id, ok := tok.TokenID(s); !ok || id != next+i {
			t.Errorf("TokenID(%q) = %d, %v, want %d", s, id, ok, next+i)
		}
	}
}
