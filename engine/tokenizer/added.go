package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// AddedToken is one entry of tokenizer.json's added_tokens: a string that is
// matched whole in the text before pre-tokenisation and stands for one id.
type AddedToken struct {
	ID         int
	Content    string
	Special    bool // a control token (HF "special"); engines may skip it when decoding
	Normalized bool // matched in the normalised text rather than the raw text
	SingleWord bool // matched only when no word character touches it
	LStrip     bool // swallows the whitespace on its left
	RStrip     bool // swallows the whitespace on its right
}

// addedMatcher finds added tokens in a text: leftmost match first, the
// longest token at that position (Aho-Corasick's leftmost-longest, which HF
// uses), non-overlapping. A byte trie keeps thousands of tokens cheap: the
// scan costs one table look-up per byte that cannot start a token.
type addedMatcher struct {
	nodes  []trieNode
	starts [256]bool // bytes that start some token
	toks   []*AddedToken
}

type trieNode struct {
	next  map[byte]int32
	token int32 // index into toks, or -1
}

func newAddedMatcher(toks []*AddedToken, content func(*AddedToken) string) *addedMatcher {
	m := &addedMatcher{nodes: []trieNode{{token: -1}}, toks: toks}
	for i, t := range toks {
		s := content(t)
		node := int32(0)
		for j := 0; j < len(s); j++ {
			nx, ok := m.nodes[node].next[s[j]]
			if !ok {
				nx = int32(len(m.nodes))
				m.nodes = append(m.nodes, trieNode{token: -1})
				if m.nodes[node].next == nil {
					m.nodes[node].next = map[byte]int32{}
				}
				m.nodes[node].next[s[j]] = nx
			}
			node = nx
		}
		m.nodes[node].token = int32(i)
		m.starts[s[0]] = true
	}
	return m
}

// longestAt returns the index and length of the longest token starting at
// s[i:], or -1.
func (m *addedMatcher) longestAt(s string, i int) (tok, length int) {
	tok = -1
	node := int32(0)
	for j := i; j < len(s); j++ {
		nx, ok := m.nodes[node].next[s[j]]
		if !ok {
			break
		}
		node = nx
		if t := m.nodes[node].token; t >= 0 {
			tok, length = int(t), j+1-i
		}
	}
	return tok, length
}

// first returns the index and byte offset of the leftmost-longest token in s,
// or -1.
func (m *addedMatcher) first(s string) (tok, offset int) {
	for i := 0; i < len(s); i++ {
		if !m.starts[s[i]] {
			continue
		}
		if k, _ := m.longestAt(s, i); k >= 0 {
			return k, i
		}
	}
	return -1, 0
}

// piece is a part of the text: an added token (tok ≥ 0) or text to tokenise.
type piece struct {
	text string
	tok  *AddedToken
}

// split cuts s into text pieces and added-token pieces the way HF's
// AddedVocabulary::split_with_indices does, flags included.
func (m *addedMatcher) split(dst []piece, s string) []piece {
	if len(m.toks) == 0 {
		return append(dst, piece{text: s})
	}
	type hit struct {
		start, stop int
		tok         *AddedToken
	}
	var hits []hit
	startOffset := 0
	for i := 0; i < len(s); {
		if !m.starts[s[i]] {
			i++
			continue
		}
		t, n := m.longestAt(s, i)
		if t < 0 {
			i++
			continue
		}
		start, stop := i, i+n
		i = stop
		tok := m.toks[t]
		if tok.SingleWord {
			startSpace := start == 0 || !endsWithWordChar(s[:start])
			stopSpace := stop == len(s) || !startsWithWordChar(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.LStrip {
			start = max(trailingSpaceStart(s[:start]), startOffset)
		}
		if tok.RStrip {
			stop += leadingSpaceLen(s[stop:])
		}
		hits = append(hits, hit{start, stop, tok})
		startOffset = stop
	}
	offset := 0
	for _, h := range hits {
		if offset < h.start {
			dst = append(dst, piece{text: s[offset:h.start]})
		}
		dst = append(dst, piece{text: s[h.start:h.stop], tok: h.tok})
		offset = h.stop
	}
	if offset < len(s) {
		dst = append(dst, piece{text: s[offset:]})
	}
	return dst
}

func isWordChar(c rune) bool { return c == '_' || unicode.IsLetter(c) || unicode.IsNumber(c) }

func endsWithWordChar(s string) bool {
	c, _ := utf8.DecodeLastRuneInString(s)
	return isWordChar(c)
}

func startsWithWordChar(s string) bool {
	c, _ := utf8.DecodeRuneInString(s)
	return isWordChar(c)
}

// trailingSpaceStart is the offset where the whitespace at the end of s begins.
func trailingSpaceStart(s string) int {
	for len(s) > 0 {
		c, w := utf8.DecodeLastRuneInString(s)
		if !unicode.IsSpace(c) {
			break
		}
		s = s[:len(s)-w]
	}
	return len(s)
}

// leadingSpaceLen is the byte length of the whitespace at the start of s.
func leadingSpaceLen(s string) int {
	n := 0
	for n < len(s) {
		c, w := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsSpace(c) {
			break
		}
		n += w
	}
	return n
}
