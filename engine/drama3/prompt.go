package drama3

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"proscenium/engine/tokenizer"
)

// This file builds Drama 3 prompts (MODEL.md §4): it checks the user's text
// (not empty, within the limits, no structural tokens but <|speaker:N|>),
// places it in the prompt template and returns the token ids. The template
// strings are public; how the text is placed in them is an assumption listed
// in docs/MODEL.md ("Tokenizer and prompt").

// Prompt template strings [public strings, assumption for the assembly].
const (
	defaultVoiceSystem = "convert the provided text to speech"
	imStart            = "<|im_start|>"
	imEnd              = "<|im_end|>"
	voiceToken         = "<|voice|>"
)

// structuralNames are the names, between "<|" and "|>", that user text may
// never contain. <|speaker:N|> is checked on its own (valid N passes).
var structuralNames = []string{"im_start", "im_end", "voice", "text", "interleave"}

// Default limits on user text.
const (
	DefaultMaxTextBytes    = 16 << 10 // 16 KiB of UTF-8
	DefaultMaxPromptTokens = 8192
)

// PromptLimits bounds the user text and the prompt built around it. A zero
// field takes its default.
type PromptLimits struct {
	MaxTextBytes    int // the user text, after trimming, in bytes
	MaxPromptTokens int // the whole prompt, in tokens
}

// PromptBuilder turns user text into prompt token ids. It is safe for
// concurrent use.
type PromptBuilder struct {
	tok    *tokenizer.Tokenizer
	limits PromptLimits
}

// NewPromptBuilder checks that tok has every structural token a prompt needs.
func NewPromptBuilder(tok *tokenizer.Tokenizer, limits PromptLimits) (*PromptBuilder, error) {
	if limits.MaxTextBytes < 0 || limits.MaxPromptTokens < 0 {
		return nil, fmt.Errorf("prompt limits must not be negative (%d bytes, %d tokens)", limits.MaxTextBytes, limits.MaxPromptTokens)
	}
	if limits.MaxTextBytes == 0 {
		limits.MaxTextBytes = DefaultMaxTextBytes
	}
	if limits.MaxPromptTokens == 0 {
		limits.MaxPromptTokens = DefaultMaxPromptTokens
	}
	need := []string{imStart, imEnd, voiceToken}
	for n := 0; n < SpeakerTokens; n++ {
		need = append(need, speakerTag(n))
	}
	for _, s := range need {
		if _, ok := tok.TokenID(s); !ok {
			return nil, fmt.Errorf("tokenizer has no %s token: not a Drama 3 tokenizer.json", s)
		}
	}
	return &PromptBuilder{tok: tok, limits: limits}, nil
}

func speakerTag(n int) string { return "<|speaker:" + strconv.Itoa(n) + "|>" }

// TextError is a refusal of the user's text; Offset is a byte offset in the
// text as given (-1 when the problem is not at one place).
type TextError struct {
	Offset int
	Token  string // the offending token, if any
	Reason string
}

func (e *TextError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("text at byte %d: %s", e.Offset, e.Reason)
	}
	return "text: " + e.Reason
}

// DefaultVoice returns the ids of the default-voice prompt for text:
// <|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n<|voice|>.
// Leading and trailing whitespace of text is dropped [assumption].
func (p *PromptBuilder) DefaultVoice(text string) ([]int, error) {
	body, err := p.CheckText(text)
	if err != nil {
		return nil, err
	}
	prompt := imStart + "system\n" + defaultVoiceSystem + imEnd + "\n" +
		imStart + "user\n" + body + imEnd + "\n" +
		imStart + "assistant\n" + voiceToken
	ids, err := p.tok.Encode(prompt)
	if err != nil {
		return nil, &TextError{Offset: -1, Reason: err.Error()}
	}
	if len(ids) > p.limits.MaxPromptTokens {
		return nil, &TextError{Offset: -1, Reason: fmt.Sprintf("the prompt is %d tokens, more than the limit of %d", len(ids), p.limits.MaxPromptTokens)}
	}
	return ids, nil
}

// CheckText validates user text and returns it trimmed: valid UTF-8, not
// empty after trimming, within MaxTextBytes, and free of structural tokens
// (<|im_start|>, <|im_end|>, <|voice|>, <|text|>, <|interleave|>,
// <|semantic:N|>, any other added token of the tokenizer such as
// <|endoftext|>) except <|speaker:N|> with N in 0..15 written without leading
// zeros. Inline directions [...] and word tags <whisper>…</whisper> are text.
func (p *PromptBuilder) CheckText(text string) (string, error) {
	if !utf8.ValidString(text) {
		for i, r := range text {
			if r == utf8.RuneError {
				if _, w := utf8.DecodeRuneInString(text[i:]); w == 1 {
					return "", &TextError{Offset: i, Reason: "invalid UTF-8"}
				}
			}
		}
	}
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	body := strings.TrimRightFunc(text[lead:], unicode.IsSpace)
	if body == "" {
		return "", &TextError{Offset: -1, Reason: "empty (nothing but whitespace)"}
	}
	if len(body) > p.limits.MaxTextBytes {
		return "", &TextError{Offset: -1, Reason: fmt.Sprintf("%d bytes, more than the limit of %d", len(body), p.limits.MaxTextBytes)}
	}
	if err := checkTags(body, lead); err != nil {
		return "", err
	}
	for off := 0; off < len(body); {
		tok, at, ok := p.tok.FindAdded(body[off:])
		if !ok {
			break
		}
		at += off
		if !validSpeakerTag(tok.Content) {
			return "", &TextError{Offset: lead + at, Token: tok.Content, Reason: fmt.Sprintf("the token %s is not allowed in user text", tok.Content)}
		}
		off = at + len(tok.Content)
	}
	return body, nil
}

// checkTags refuses "<|name|>" spellings of the structural tokens, whether or
// not the tokenizer has them (<|semantic:99999|>, <|speaker:01|>): they are
// never text a speaker should read.
func checkTags(body string, base int) error {
	for i := 0; ; {
		j := strings.Index(body[i:], "<|")
		if j < 0 {
			return nil
		}
		start := i + j
		i = start + 2
		end := strings.Index(body[i:], "|>")
		if end < 0 {
			return nil
		}
		name := body[i : i+end]
		tag := body[start : i+end+2]
		switch {
		case strings.HasPrefix(name, "speaker:"):
			if !validSpeakerTag(tag) {
				return &TextError{Offset: base + start, Token: tag, Reason: fmt.Sprintf("%s is not a speaker tag (<|speaker:N|>, N 0..15 without leading zeros)", tag)}
			}
		case strings.HasPrefix(name, "semantic:") || contains(structuralNames, name):
			return &TextError{Offset: base + start, Token: tag, Reason: fmt.Sprintf("the structural token %s is not allowed in user text", tag)}
		}
	}
}

// validSpeakerTag reports whether s is <|speaker:N|> with N in 0..15 and no
// leading zeros.
func validSpeakerTag(s string) bool {
	n, ok := strings.CutPrefix(s, "<|speaker:")
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, "|>")
	if !ok || n == "" || len(n) > 2 || (len(n) == 2 && n[0] == '0') {
		return false
	}
	v, err := strconv.Atoi(n)
	return err == nil && n[0] != '+' && n[0] != '-' && v >= 0 && v < SpeakerTokens
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
