package tokenizer

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// gpt2Pattern is the regex of the ByteLevel pre-tokeniser when use_regex is set.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// preStep is one pre-tokeniser step: it cuts each piece into smaller pieces.
type preStep interface {
	appendPieces(dst []string, s string) []string
}

// qwenSplit is Split(qwenPattern, Isolated) through the hand-written scanner.
type qwenSplit struct{}

func (qwenSplit) appendPieces(dst []string, s string) []string { return qwenScan(dst, s) }

// regexSplit is Split(pattern, Isolated) through regexp2, a backtracking
// engine with look-around like the Oniguruma engine HF uses. Matched and
// unmatched parts both become pieces.
type regexSplit struct{ re *regexp2.Regexp }

func (r regexSplit) appendPieces(dst []string, s string) []string {
	runes := []rune(s)
	// regexp2 reports rune indices; map them back to byte offsets.
	byteAt := make([]int, len(runes)+1)
	off := 0
	for i, c := range runes {
		byteAt[i] = off
		off += utf8.RuneLen(c)
	}
	byteAt[len(runes)] = off
	last := 0
	m, err := r.re.FindRunesMatch(runes)
	for err == nil && m != nil {
		start, end := byteAt[m.Index], byteAt[m.Index+m.Length]
		if start > last {
			dst = append(dst, s[last:start])
		}
		if end > start {
			dst = append(dst, s[start:end])
		}
		last = end
		m, err = r.re.FindNextMatch(m)
	}
	if last < len(s) {
		dst = append(dst, s[last:])
	}
	return dst
}

// prefixSpace is ByteLevel's add_prefix_space: a piece that does not start
// with U+0020 gets one.
type prefixSpace struct{}

func (prefixSpace) appendPieces(dst []string, s string) []string {
	if len(s) > 0 && s[0] != ' ' {
		return append(dst, " "+s)
	}
	return append(dst, s)
}

// parsePreTokenizer turns the pre_tokenizer entry into steps. Supported:
// Split (Isolated, not inverted, Regex or String pattern), ByteLevel (its
// add_prefix_space and use_regex), and a Sequence of those.
func parsePreTokenizer(raw json.RawMessage) ([]preStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %v", err)
	}
	return preSteps(c, "pre_tokenizer")
}

func preSteps(c componentJSON, where string) ([]preStep, error) {
	switch c.Type {
	case "Sequence":
		var steps []preStep
		for i, sub := range c.Pretokenizers {
			s, err := preSteps(sub, fmt.Sprintf("%s.pretokenizers[%d]", where, i))
			if err != nil {
				return nil, err
			}
			steps = append(steps, s...)
		}
		return steps, nil
	case "Split":
		if c.Behavior != "Isolated" {
			return nil, fmt.Errorf("%s: Split behavior %q is not supported (only Isolated)", where, c.Behavior)
		}
		if c.Invert {
			return nil, fmt.Errorf("%s: inverted Split is not supported", where)
		}
		if c.Pattern == nil || (c.Pattern.Regex == nil) == (c.Pattern.String == nil) {
			return nil, fmt.Errorf("%s: Split needs a pattern with exactly one of Regex or String", where)
		}
		if c.Pattern.String != nil {
			if *c.Pattern.String == "" {
				return nil, fmt.Errorf("%s: empty Split string", where)
			}
			re, err := regexp2.Compile(regexp2.Escape(*c.Pattern.String), regexp2.None)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			return []preStep{regexSplit{re}}, nil
		}
		if *c.Pattern.Regex == qwenPattern {
			return []preStep{qwenSplit{}}, nil
		}
		re, err := regexp2.Compile(*c.Pattern.Regex, regexp2.None)
		if err != nil {
			return nil, fmt.Errorf("%s: Split regex %q: %v", where, *c.Pattern.Regex, err)
		}
		return []preStep{regexSplit{re}}, nil
	case "ByteLevel":
		var steps []preStep
		if c.AddPrefixSpace {
			steps = append(steps, prefixSpace{})
		}
		if c.UseRegex == nil || *c.UseRegex {
			steps = append(steps, regexSplit{regexp2.MustCompile(gpt2Pattern, regexp2.None)})
		}
		return steps, nil
	case "":
		return nil, fmt.Errorf("%s: missing type", where)
	default:
		return nil, fmt.Errorf("%s: pre-tokeniser type %q is not supported", where, c.Type)
	}
}
