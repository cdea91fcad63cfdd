package tokenizer

import (
	"sort"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// graphemeJoiner is U+034F COMBINING GRAPHEME JOINER.
const graphemeJoiner = "\u034F"

// nfc is Unicode Normalization Form C as UAX #15 defines it, which is what HF
// tokenizers computes. x/text's norm.NFC differs in one respect: it follows
// the Stream-Safe Text Format and inserts U+034F after every 30 successive
// non-starters (so a long run of combining marks is reordered in pieces).
// Text where that happened goes through fullNFC instead.
func nfc(s string) string {
	out := norm.NFC.String(s)
	if strings.Contains(out, graphemeJoiner) && strings.Count(out, graphemeJoiner) != strings.Count(s, graphemeJoiner) {
		return fullNFC(s)
	}
	return out
}

// fullNFC is the textbook algorithm: full canonical decomposition, canonical
// ordering of each run of non-starters (stable sort by combining class), then
// canonical composition as in the UAX #15 sample code. Only text with runs
// of more than 30 combining marks takes this path.
func fullNFC(s string) string {
	var d []rune
	for _, r := range s {
		d = append(d, []rune(norm.NFD.String(string(r)))...)
	}
	for i := 0; i < len(d); {
		if combiningClass(d[i]) == 0 {
			i++
			continue
		}
		j := i
		for j < len(d) && combiningClass(d[j]) != 0 {
			j++
		}
		run := d[i:j]
		sort.SliceStable(run, func(a, b int) bool { return combiningClass(run[a]) < combiningClass(run[b]) })
		i = j
	}
	if len(d) == 0 {
		return ""
	}
	starterPos, starter := 0, d[0]
	lastClass := int(combiningClass(starter))
	if lastClass != 0 {
		lastClass = 256 // a leading combining mark blocks everything after it
	}
	out := 1
	for _, c := range d[1:] {
		class := int(combiningClass(c))
		if p, ok := primaryComposite(starter, c); ok && (lastClass < class || lastClass == 0) {
			d[starterPos], starter = p, p
			continue
		}
		if class == 0 {
			starterPos, starter = out, c
		}
		lastClass = class
		d[out] = c
		out++
	}
	return string(d[:out])
}

func combiningClass(r rune) uint8 { return norm.NFD.PropertiesString(string(r)).CCC() }

// composites memoises primaryComposite (bounded: adversarial text cannot
// grow it without limit).
var composites struct {
	sync.Mutex
	m map[[2]rune]rune // → the composite, or -1 when the pair does not compose
}

const compositesMax = 1 << 16

// primaryComposite returns the character that a followed by b composes to, if
// any: NFC of the pair must be one character whose decomposition is a's
// followed by b.
func primaryComposite(a, b rune) (rune, bool) {
	key := [2]rune{a, b}
	composites.Lock()
	r, ok := composites.m[key]
	composites.Unlock()
	if ok {
		return r, r >= 0
	}
	pair := string(a) + string(b)
	p := []rune(norm.NFC.String(pair))
	r = -1
	if len(p) == 1 && norm.NFD.String(string(p[0])) == norm.NFD.String(string(a))+string(b) {
		r = p[0]
	}
	composites.Lock()
	if composites.m == nil {
		composites.m = make(map[[2]rune]rune)
	}
	if len(composites.m) < compositesMax {
		composites.m[key] = r
	}
	composites.Unlock()
	return r, r >= 0
}
