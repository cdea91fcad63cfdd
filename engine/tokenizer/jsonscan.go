package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// This file reads tokenizer.json without reflecting the 11 MB vocabulary and
// merge list through encoding/json (which takes most of a second): a small
// scanner walks the top level and the model object, parses model.vocab and
// model.merges itself, and hands every other (small) value to encoding/json.

// jsonScanner reads JSON from data at pos; errors name the byte offset.
type jsonScanner struct {
	data []byte
	pos  int
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("tokenizer.json at byte %d: %s", s.pos, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte without consuming it (0 at
// the end).
func (s *jsonScanner) next() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *jsonScanner) expect(c byte) error {
	if got := s.next(); got != c {
		if got == 0 {
			return s.errorf("unexpected end of file, want %q", c)
		}
		return s.errorf("found %q, want %q", got, c)
	}
	s.pos++
	return nil
}

// rawString returns the bytes of the JSON string at pos, unescaped. Without
// escapes the result aliases data.
func (s *jsonScanner) rawString() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.pos
	escaped := false
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			if !escaped {
				b := s.data[start : s.pos-1]
				if !utf8.Valid(b) {
					return nil, fmt.Errorf("tokenizer.json at byte %d: string is not valid UTF-8", start)
				}
				return b, nil
			}
			var out string
			if err := json.Unmarshal(s.data[start-1:s.pos], &out); err != nil {
				return nil, fmt.Errorf("tokenizer.json at byte %d: %v", start, err)
			}
			return []byte(out), nil
		case c == '\\':
			escaped = true
			s.pos += 2
		case c < 0x20:
			return nil, s.errorf("control character in string")
		default:
			s.pos++
		}
	}
	return nil, fmt.Errorf("tokenizer.json at byte %d: unterminated string", start-1)
}

func (s *jsonScanner) int() (int, error) {
	s.ws()
	start := s.pos
	if s.pos < len(s.data) && s.data[s.pos] == '-' {
		s.pos++
	}
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	v, err := strconv.Atoi(string(s.data[start:s.pos]))
	if err != nil {
		s.pos = start
		return 0, s.errorf("want an integer")
	}
	return v, nil
}

// skipValue moves past one JSON value and returns its bytes. It checks
// nesting and strings only; callers hand the bytes to encoding/json, which
// validates them.
func (s *jsonScanner) skipValue() ([]byte, error) {
	s.ws()
	start := s.pos
	depth := 0
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case '"':
			if _, err := s.rawString(); err != nil {
				return nil, err
			}
			if depth == 0 {
				return s.data[start:s.pos], nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return s.data[start:s.pos], nil
			}
			depth--
			if depth == 0 {
				s.pos++
				return s.data[start:s.pos], nil
			}
		case ',':
			if depth == 0 {
				return s.data[start:s.pos], nil
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return s.data[start:s.pos], nil
			}
		}
		s.pos++
	}
	if depth > 0 {
		return nil, s.errorf("unexpected end of file")
	}
	return s.data[start:s.pos], nil
}

// object calls field for each key of the object at pos; field must consume
// the value.
func (s *jsonScanner) object(field func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.next() == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.rawString()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(string(key)); err != nil {
			return err
		}
		switch s.next() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.errorf("want ',' or '}' after the value of %q", key)
		}
	}
}

// array calls elem for each element of the array at pos.
func (s *jsonScanner) array(elem func(i int) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.next() == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		switch s.next() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.errorf("want ',' or ']' after element %d", i)
		}
	}
}

// decodeFile reads a tokenizer.json into f, with model.vocab and
// model.merges parsed by hand (merges as byte-string pairs).
func decodeFile(data []byte) (*fileJSON, [][2][]byte, error) {
	s := &jsonScanner{data: data}
	f := &fileJSON{}
	var merges [][2][]byte
	into := func(key string, dst any) error {
		raw, err := s.skipValue()
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return fmt.Errorf("tokenizer.json %s: %v", key, err)
		}
		return nil
	}
	err := s.object(func(key string) error {
		switch key {
		case "added_tokens":
			return into(key, &f.AddedTokens)
		case "normalizer":
			return into(key, &f.Normalizer)
		case "pre_tokenizer":
			return into(key, &f.PreTokenizer)
		case "decoder":
			return into(key, &f.Decoder)
		case "model":
			if s.next() == 'n' {
				return into(key, &f.Model)
			}
			m, mm, err := s.model()
			f.Model, merges = m, mm
			return err
		default:
			var v any
			return into(key, &v)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if s.next() != 0 {
		return nil, nil, s.errorf("data after the top-level object")
	}
	return f, merges, nil
}

// model reads the model object: vocab and merges by hand, the other keys
// through encoding/json.
func (s *jsonScanner) model() (*modelJSON, [][2][]byte, error) {
	var rest bytes.Buffer // the other keys, re-assembled as one object
	rest.WriteByte('{')
	m := &modelJSON{}
	var merges [][2][]byte
	err := s.object(func(key string) error {
		switch key {
		case "vocab":
			v, err := s.vocab()
			m.Vocab = v
			return err
		case "merges":
			mm, err := s.merges()
			merges = mm
			m.HasMerges = true
			return err
		default:
			raw, err := s.skipValue()
			if err != nil {
				return err
			}
			if rest.Len() > 1 {
				rest.WriteByte(',')
			}
			k, _ := json.Marshal(key)
			rest.Write(k)
			rest.WriteByte(':')
			rest.Write(raw)
			return nil
		}
	})
	if err != nil {
		return nil, nil, err
	}
	rest.WriteByte('}')
	vocab, hasMerges := m.Vocab, m.HasMerges
	if err := json.Unmarshal(rest.Bytes(), m); err != nil {
		return nil, nil, fmt.Errorf("tokenizer.json model: %v", err)
	}
	m.Vocab, m.HasMerges = vocab, hasMerges
	return m, merges, nil
}

// sizeHint guesses how many entries a vocabulary or merge list starting at
// pos may hold (an entry takes at least 8 bytes), capped so that a small file
// does not allocate for a large one.
func (s *jsonScanner) sizeHint() int {
	return min((len(s.data)-s.pos)/8, 1<<18)
}

func (s *jsonScanner) vocab() (map[string]int, error) {
	if s.next() == 'n' {
		_, err := s.skipValue()
		return nil, err
	}
	v := make(map[string]int, s.sizeHint())
	err := s.object(func(sym string) error {
		id, err := s.int()
		if err != nil {
			return fmt.Errorf("model.vocab[%q]: %w", sym, err)
		}
		n := len(v)
		v[sym] = id
		if len(v) == n {
			return fmt.Errorf("model.vocab: symbol %q appears twice", sym)
		}
		return nil
	})
	return v, err
}

// merges reads model.merges in either spelling HF writes: [["a", "b"], …]
// or ["a b", …] (tokenizers < 0.20).
func (s *jsonScanner) merges() ([][2][]byte, error) {
	if s.next() == 'n' {
		_, err := s.skipValue()
		return nil, err
	}
	if s.next() != '[' {
		return nil, fmt.Errorf("model.merges is not an array")
	}
	out := make([][2][]byte, 0, s.sizeHint())
	err := s.array(func(i int) error {
		switch s.next() {
		case '[':
			var pair [2][]byte
			n := 0
			err := s.array(func(j int) error {
				b, err := s.rawString()
				if err != nil {
					return err
				}
				if j < 2 {
					pair[j] = b
				}
				n++
				return nil
			})
			if err != nil {
				return fmt.Errorf("model.merges[%d]: %w", i, err)
			}
			if n != 2 {
				return fmt.Errorf("model.merges[%d] has %d strings, want 2", i, n)
			}
			out = append(out, pair)
		case '"':
			l, err := s.rawString()
			if err != nil {
				return fmt.Errorf("model.merges[%d]: %w", i, err)
			}
			a, b, ok := bytes.Cut(l, []byte{' '})
			if !ok || len(a) == 0 || len(b) == 0 || bytes.IndexByte(b, ' ') >= 0 {
				return fmt.Errorf("model.merges[%d] = %q is not two symbols separated by one space", i, l)
			}
			out = append(out, [2][]byte{a, b})
		default:
			return fmt.Errorf("model.merges[%d]: %w", i, s.errorf("want a string or a pair of strings"))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
