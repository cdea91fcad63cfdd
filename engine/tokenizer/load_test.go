package tokenizer

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// smallTokenizerMap is a minimal valid byte-level BPE tokenizer.json: the 256
// byte symbols (ids 0..255 in byte order), one merge h+i → "hi" (id 256) and
// one special token <|end|> (id 257). edit changes it before encoding.
func smallTokenizerJSON(t testing.TB, edit func(m map[string]any)) []byte {
	t.Helper()
	vocab := map[string]any{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	vocab["hi"] = 256
	m := map[string]any{
		"version": "1.0",
		"added_tokens": []any{map[string]any{"id": 257, "content": "<|end|>", "single_word": false,
			"lstrip": false, "rstrip": false, "normalized": false, "special": true}},
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwenPattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": []any{[]any{"h", "i"}}},
	}
	if edit != nil {
		edit(m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func model(m map[string]any) map[string]any { return m["model"].(map[string]any) }

func TestSmallTokenizer(t *testing.T) {
	tok, err := Parse(smallTokenizerJSON(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode("hi hi<|end|>")
	if err != nil {
		t.Fatal(err)
	}
	// "hi" merges; " hi" is ' ' 'h' 'i' with only h+i merging → ' ' , "hi".
	want := []int{256, ' ', 256, 257}
	if !slices.Equal(ids, want) {
		t.Errorf("Encode = %v, want %v", ids, want)
	}
	ids, _ = tok.EncodeOrdinary("<|end|>")
	if len(ids) != 7 {
		t.Errorf("EncodeOrdinary(<|end|>) = %v, want 7 byte tokens", ids)
	}
	if !tok.IsSpecial(257) || tok.IsSpecial(256) || tok.VocabSize() != 258 {
		t.Errorf("IsSpecial/VocabSize wrong: %v %v %d", tok.IsSpecial(257), tok.IsSpecial(256), tok.VocabSize())
	}
	// Merges in the older "a b" spelling give the same model.
	old, err := Parse(smallTokenizerJSON(t, func(m map[string]any) { model(m)["merges"] = []any{"h i"} }))
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := old.Encode("hi"); !slices.Equal(ids, []int{256}) {
		t.Errorf("string merges: Encode(hi) = %v", ids)
	}
}

// TestParseMalformed feeds broken files: each must fail with an error naming
// the problem, never panic.
func TestParseMalformed(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", []byte(``), "tokenizer.json"},
		{"not json", []byte(`{"model": [`), "tokenizer.json"},
		{"array", []byte(`[]`), "tokenizer.json"},
		{"no model", []byte(`{"added_tokens": []}`), "no model"},
	}
	edits := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"wordpiece", func(m map[string]any) { model(m)["type"] = "WordPiece" }, `model.type "WordPiece"`},
		{"dropout", func(m map[string]any) { model(m)["dropout"] = 0.1 }, "model.dropout"},
		{"suffix", func(m map[string]any) { model(m)["end_of_word_suffix"] = "</w>" }, "end_of_word_suffix"},
		{"prefix", func(m map[string]any) { model(m)["continuing_subword_prefix"] = "##" }, "continuing_subword_prefix"},
		{"no vocab", func(m map[string]any) { delete(model(m), "vocab") }, "model.vocab is missing"},
		{"vocab not object", func(m map[string]any) { model(m)["vocab"] = []any{1} }, "tokenizer.json"},
		{"byte missing", func(m map[string]any) { delete(model(m)["vocab"].(map[string]any), "Ġ") }, `byte-level symbol "Ġ" (byte 0x20)`},
		{"negative id", func(m map[string]any) { model(m)["vocab"].(map[string]any)["hi"] = -3 }, `model.vocab["hi"] = -3`},
		{"huge id", func(m map[string]any) { model(m)["vocab"].(map[string]any)["hi"] = 1 << 40 }, `model.vocab["hi"]`},
		{"shared id", func(m map[string]any) { model(m)["vocab"].(map[string]any)["n"] = 11 }, `model.vocab: id 11 is given to 2 symbols ["n" "ċ"]`},
		{"merge unknown", func(m map[string]any) { model(m)["merges"] = []any{[]any{"h", "zz"}} }, `model.merges[0]: symbol "zz"`},
		{"merge result unknown", func(m map[string]any) { model(m)["merges"] = []any{[]any{"h", "h"}} }, `merged symbol "hh"`},
		{"merge triple", func(m map[string]any) { model(m)["merges"] = []any{[]any{"h", "i", "x"}} }, "model.merges[0] has 3 strings"},
		{"merge string", func(m map[string]any) { model(m)["merges"] = []any{"hi"} }, `model.merges[0] = "hi"`},
		{"merges object", func(m map[string]any) { model(m)["merges"] = map[string]any{} }, "model.merges is not an array"},
		{"added no id", func(m map[string]any) { m["added_tokens"] = []any{map[string]any{"content": "x"}} }, "added_tokens[0]: no id"},
		{"added no content", func(m map[string]any) { m["added_tokens"] = []any{map[string]any{"id": 300}} }, "added_tokens[0]: no content"},
		{"added empty", func(m map[string]any) { m["added_tokens"] = []any{map[string]any{"id": 300, "content": ""}} }, "empty content"},
		{"added huge id", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 1 << 40, "content": "<x>"}}
		}, "out of range"},
		{"added dup content", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 300, "content": "<x>"}, map[string]any{"id": 301, "content": "<x>"}}
		}, `added_tokens[1]: content "<x>" repeats added_tokens[0]`},
		{"added dup id", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 300, "content": "<x>"}, map[string]any{"id": 300, "content": "<y>"}}
		}, "id 300 is already added_tokens[0]"},
		{"normalizer", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "NFKC"} }, `normalizer "NFKC"`},
		{"decoder", func(m map[string]any) { m["decoder"] = map[string]any{"type": "WordPiece"} }, `decoder "WordPiece"`},
		{"no decoder", func(m map[string]any) { delete(m, "decoder") }, "decoder is missing"},
		{"pretok type", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Whitespace"} }, `"Whitespace" is not supported`},
		{"pretok no type", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{} }, "pre_tokenizer: missing type"},
		{"split behaviour", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "a"}, "behavior": "Removed"}
		}, `Split behavior "Removed"`},
		{"split no pattern", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "behavior": "Isolated"}
		}, "exactly one of Regex or String"},
		{"split bad regex", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(a"}, "behavior": "Isolated"}
		}, "Split regex"},
		{"split inverted", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "a"}, "behavior": "Isolated", "invert": true}
		}, "inverted"},
	}
	for _, e := range edits {
		cases = append(cases, struct {
			name string
			data []byte
			want string
		}{e.name, smallTokenizerJSON(t, e.edit), e.want})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// Every prefix of a valid file fails cleanly.
	valid := smallTokenizerJSON(t, nil)
	for n := 0; n < len(valid); n += 97 {
		if _, err := Parse(valid[:n]); err == nil {
			t.Errorf("prefix of %d bytes accepted", n)
		}
	}
}

func TestDecodeUnknownID(t *testing.T) {
	tok, err := Parse(smallTokenizerJSON(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{-1, 258, 1 << 40} {
		if _, err := tok.Decode([]int{1, id}); err == nil || !strings.Contains(err.Error(), "position 1") {
			t.Errorf("Decode(%d) error = %v", id, err)
		}
	}
}

// FuzzParse: any bytes give a Tokenizer or an error, never a panic; a
// Tokenizer that parses encodes and decodes without panicking, gives only
// ids of its vocabulary, and decodes the ids of ASCII text back to that
// text (byte-level BPE loses nothing; only an added token that strips the
// whitespace beside it may drop some, and add_prefix_space adds a space to
// a piece that lacks one: with those only the text's other characters must
// come back).
func FuzzParse(f *testing.F) {
	f.Add(smallTokenizerJSON(f, nil))
	f.Add(smallTokenizerJSON(f, func(m map[string]any) { model(m)["merges"] = []any{"h i"} }))
	f.Add(smallTokenizerJSON(f, func(m map[string]any) {
		m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": true}
	}))
	f.Add([]byte(`{"model":{"vocab":{"a\u0041":1},"merges":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := Parse(data)
		if err != nil {
			return
		}
		ids, err := tok.Encode("hi there <|end|> 12 é")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tok.Decode(ids); err != nil {
			t.Fatal(err)
		}
		strips, prefixes := false, slices.ContainsFunc(tok.preSteps, func(s preStep) bool { _, ok := s.(prefixSpace); return ok })
		for _, a := range tok.AddedTokens() {
			strips = strips || a.LStrip || a.RStrip
		}
		for _, text := range []string{"hi there <|end|> 12", "A  tab\tand\nnewline, {json: [1, 2]}; ~`!@#$%^&*()_+-=|\\'\"?/<>.", ""} {
			ids, err := tok.Encode(text)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if _, ok := tok.Token(id); !ok || id >= tok.VocabSize() {
					t.Fatalf("Encode(%q) gave id %d, not a token of this tokenizer (vocabulary %d)", text, id, tok.VocabSize())
				}
			}
			back, err := tok.Decode(ids)
			if err != nil {
				t.Fatal(err)
			}
			if back != text && (!strips && !prefixes || withoutSpace(back) != withoutSpace(text)) {
				t.Fatalf("Decode(Encode(%q)) = %q (ids %v)", text, back, ids)
			}
		}
	})
}

func withoutSpace(s string) string { return strings.Join(strings.Fields(s), "") }

// TestAddedTokenFlags checks lstrip, rstrip, single_word and normalized
// against HF's AddedVocabulary rules, worked by hand on the small tokenizer
// (ids of plain bytes are the byte values).
func TestAddedTokenFlags(t *testing.T) {
	entry := func(id int, content string, flag string, normalized bool) map[string]any {
		e := map[string]any{"id": id, "content": content, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": normalized, "special": false}
		if flag != "" {
			e[flag] = true
		}
		return e
	}
	cases := []struct {
		name  string
		token map[string]any
		text  string
		want  []int
	}{
		{"plain", entry(258, "<|a|>", "", false), "x  <|a|>  y", []int{'x', ' ', ' ', 258, ' ', ' ', 'y'}},
		{"lstrip", entry(258, "<|a|>", "lstrip", false), "x  <|a|>  y", []int{'x', 258, ' ', ' ', 'y'}},
		{"rstrip", entry(258, "<|a|>", "rstrip", false), "x  <|a|>  y", []int{'x', ' ', ' ', 258, 'y'}},
		{"single word, glued", entry(258, "<|a|>", "single_word", false), "x<|a|>", []int{'x', '<', '|', 'a', '|', '>'}},
		{"single word, apart", entry(258, "<|a|>", "single_word", false), "x <|a|> y", []int{'x', ' ', 258, ' ', 'y'}},
		// A normalised token is matched by its NFC content in the NFC text.
		{"normalized", entry(258, "e\u0301", "", true), "xe\u0301", []int{'x', 258}},
		{"not normalized", entry(258, "e\u0301", "", false), "x\u00e9", []int{'x', 0xC3, 0xA9}},
		// Longest match at the leftmost position.
		{"longest", entry(258, "<|end|>x", "", false), "<|end|>x<|end|>", []int{258, 257}},
	}
	for _, c := range cases {
		tok, err := Parse(smallTokenizerJSON(t, func(m map[string]any) {
			m["added_tokens"] = append(m["added_tokens"].([]any), c.token)
		}))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := tok.Encode(c.text)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: Encode(%q) = %v, %v; want %v", c.name, c.text, got, err, c.want)
		}
	}
}

// TestPreTokenizerVariants: the regexp2 path for tokenizers other than Qwen's
// (GPT-2's ByteLevel regex with a prefix space, a literal Split), worked by
// hand on the small tokenizer.
func TestPreTokenizerVariants(t *testing.T) {
	cases := []struct {
		name string
		pre  map[string]any
		text string
		want []int
	}{
		// Prefix space, then " hi" | " there".
		{"gpt2 prefix space", map[string]any{"type": "ByteLevel", "add_prefix_space": true},
			"hi there", []int{' ', 256, ' ', 't', 'h', 'e', 'r', 'e'}},
		// No prefix space: "hi" | " there".
		{"gpt2", map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
			"hi there", []int{256, ' ', 't', 'h', 'e', 'r', 'e'}},
		// No pre-tokeniser: the whole text is one BPE word.
		{"none", nil, "hi hi", []int{256, ' ', 256}},
		// Literal split on "-", isolated: "hi" | "-" | "hi".
		{"split string", map[string]any{"type": "Split", "pattern": map[string]any{"String": "-"}, "behavior": "Isolated"},
			"hi-hi", []int{256, '-', 256}},
		// The Qwen regex through regexp2 when spelled differently (a
		// non-capturing group around it): same pieces as the scanner.
		{"qwen via regexp2", map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(?:" + qwenPattern + ")"}, "behavior": "Isolated"},
			"hi  hi", []int{256, ' ', ' ', 256}}, // "hi" | " " | " hi"
	}
	for _, c := range cases {
		tok, err := Parse(smallTokenizerJSON(t, func(m map[string]any) {
			if c.pre == nil {
				delete(m, "pre_tokenizer")
			} else {
				m["pre_tokenizer"] = c.pre
			}
		}))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := tok.Encode(c.text)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: Encode(%q) = %v, %v; want %v", c.name, c.text, got, err, c.want)
		}
	}
}

func TestParseDuplicateVocab(t *testing.T) {
	data := smallTokenizerJSON(t, nil)
	dup := bytes.Replace(data, []byte(`"hi":256`), []byte(`"hi":256,"hi":257`), 1)
	if bytes.Equal(dup, data) {
		t.Fatal("test setup: vocab entry not found")
	}
	if _, err := Parse(dup); err == nil || !strings.Contains(err.Error(), `symbol "hi" appears twice`) {
		t.Errorf("error = %v", err)
	}
}
