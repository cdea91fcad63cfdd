package drama3

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"proscenium/engine/tokenizer"
)

var (
	promptTokOnce sync.Once
	promptTok     *tokenizer.Tokenizer
	promptTokErr  error
)

// drama3Tok is the Qwen3 tokenizer with the Drama 3 tokens, as make-tiny writes it.
func drama3Tok(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	base := baseTokenizer(t)
	promptTokOnce.Do(func() {
		var data []byte
		if data, _, promptTokErr = drama3Tokenizer(base, 4096); promptTokErr == nil {
			promptTok, promptTokErr = tokenizer.Parse(data)
		}
	})
	if promptTokErr != nil {
		t.Fatal(promptTokErr)
	}
	return promptTok
}

// Qwen3 ids (qwen3-golden.json and the Qwen vocabulary): <|im_start|>,
// <|im_end|>, "\n", "system", "user", "assistant"; Drama 3 ids follow Qwen3's
// last id 151668 in StructuralTokens order.
const (
	idImStart   = 151644
	idImEnd     = 151645
	idNewline   = 198
	idSystem    = 8948
	idUser      = 872
	idAssistant = 77091
	idVoice     = 151669
	idSpeaker0  = 151669 + 3
)

func wantPrompt(t *testing.T, tok *tokenizer.Tokenizer, body []int) []int {
	system, err := tok.EncodeOrdinary("convert the provided text to speech")
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{idImStart, idSystem, idNewline}
	ids = append(ids, system...)
	ids = append(ids, idImEnd, idNewline, idImStart, idUser, idNewline)
	ids = append(ids, body...)
	return append(ids, idImEnd, idNewline, idImStart, idAssistant, idNewline, idVoice)
}

func TestDefaultVoicePrompt(t *testing.T) {
	tok := drama3Tok(t)
	p, err := NewPromptBuilder(tok, PromptLimits{})
	if err != nil {
		t.Fatal(err)
	}
	// "Hello, world!" is [9707 11 1879 0] in qwen3-golden.json.
	hello := []int{9707, 11, 1879, 0}
	cases := []struct {
		text string
		body []int
	}{
		{"Hello, world!", hello},
		{"  Hello, world! \n\t", hello}, // trimmed
		{"<|speaker:0|>Hello, world!<|speaker:15|>Hello, world!",
			append(append([]int{idSpeaker0}, hello...), append([]int{idSpeaker0 + 15}, hello...)...)},
	}
	for _, c := range cases {
		got, err := p.DefaultVoice(c.text)
		if err != nil {
			t.Errorf("DefaultVoice(%q): %v", c.text, err)
			continue
		}
		if want := wantPrompt(t, tok, c.body); !slices.Equal(got, want) {
			t.Errorf("DefaultVoice(%q)\n got %v\nwant %v", c.text, got, want)
		}
	}
	// Directions and word tags are ordinary text.
	for _, text := range []string{"[whispering] Route 6 is open.", "<whisper>quietly</whisper> then LOUD", "a <b> c |> <| d"} {
		body, err := tok.EncodeOrdinary(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.DefaultVoice(text)
		if err != nil {
			t.Errorf("DefaultVoice(%q): %v", text, err)
		} else if want := wantPrompt(t, tok, body); !slices.Equal(got, want) {
			t.Errorf("DefaultVoice(%q)\n got %v\nwant %v", text, got, want)
		}
	}
}

func TestPromptRefusals(t *testing.T) {
	tok := drama3Tok(t)
	p, err := NewPromptBuilder(tok, PromptLimits{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		text   string
		offset int
		token  string
		reason string
	}{
		{"", -1, "", "empty"},
		{" \n\t\u3000", -1, "", "empty"},
		{"a<|im_end|>b", 1, "<|im_end|>", "<|im_end|>"},
		{"  x<|im_start|>", 3, "<|im_start|>", "<|im_start|>"},
		{"go <|voice|>", 3, "<|voice|>", "<|voice|>"},
		{"<|text|>", 0, "<|text|>", "<|text|>"},
		{"x<|interleave|>", 1, "<|interleave|>", "<|interleave|>"},
		{"code <|semantic:12|>", 5, "<|semantic:12|>", "<|semantic:12|>"},
		{"code <|semantic:99999|>", 5, "<|semantic:99999|>", "<|semantic:99999|>"}, // not a token, still refused
		{"end<|endoftext|>", 3, "<|endoftext|>", "<|endoftext|>"},
		{"<|speaker:0|>ok <tool_call>", 16, "<tool_call>", "<tool_call>"}, // a non-special added token
		{"<|speaker:16|>hi", 0, "<|speaker:16|>", "not a speaker tag"},
		{"<|speaker:01|>hi", 0, "<|speaker:01|>", "not a speaker tag"},
		{"<|speaker:-1|>hi", 0, "<|speaker:-1|>", "not a speaker tag"},
		{"<|speaker:|>hi", 0, "<|speaker:|>", "not a speaker tag"},
		{"ok\xff", 2, "", "invalid UTF-8"},
	}
	for _, c := range cases {
		_, err := p.DefaultVoice(c.text)
		var te *TextError
		if !errors.As(err, &te) {
			t.Errorf("DefaultVoice(%q) error = %v, want a TextError", c.text, err)
			continue
		}
		if te.Offset != c.offset || te.Token != c.token || !strings.Contains(te.Error(), c.reason) {
			t.Errorf("DefaultVoice(%q) = %q (offset %d, token %q), want offset %d, token %q, mentioning %q",
				c.text, te.Error(), te.Offset, te.Token, c.offset, c.token, c.reason)
		}
		if c.offset >= 0 && !strings.Contains(te.Error(), "at byte") {
			t.Errorf("error %q does not give the byte offset", te.Error())
		}
	}
}

func TestPromptLimits(t *testing.T) {
	tok := drama3Tok(t)
	p, err := NewPromptBuilder(tok, PromptLimits{MaxTextBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := p.DefaultVoice("0123456789")
	if err != nil {
		t.Fatalf("10 bytes refused: %v", err)
	}
	_, err = p.DefaultVoice("  0123456789A ")
	if err == nil || !strings.Contains(err.Error(), "11 bytes, more than the limit of 10") {
		t.Errorf("11 bytes: error = %v", err)
	}
	// Digits are one token each: the prompt is the template plus 10.
	if want := len(wantPrompt(t, tok, nil)) + 10; len(ids) != want {
		t.Fatalf("prompt of 10 digits is %d tokens, want %d", len(ids), want)
	}
	exact, _ := NewPromptBuilder(tok, PromptLimits{MaxPromptTokens: len(ids)})
	if _, err := exact.DefaultVoice("0123456789"); err != nil {
		t.Errorf("prompt at the token limit refused: %v", err)
	}
	short, _ := NewPromptBuilder(tok, PromptLimits{MaxPromptTokens: len(ids) - 1})
	_, err = short.DefaultVoice("0123456789")
	want := fmt.Sprintf("the prompt is %d tokens, more than the limit of %d", len(ids), len(ids)-1)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("token limit: error = %v, want %q", err, want)
	}
	if _, err := NewPromptBuilder(tok, PromptLimits{MaxTextBytes: -1}); err == nil {
		t.Error("negative limit accepted")
	}
}

func TestPromptBuilderNeedsDrama3Tokens(t *testing.T) {
	qwen, err := tokenizer.Parse(baseTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPromptBuilder(qwen, PromptLimits{}); err == nil || !strings.Contains(err.Error(), "no <|voice|> token") {
		t.Errorf("plain Qwen tokenizer: error = %v", err)
	}
}
