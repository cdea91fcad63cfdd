package script

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A screenplay, as writers keep one, becomes the studio's script here: each
// speech one line, <|speaker:N|> and its words, the characters numbered as
// they first speak. Two ways of writing dialogue are read, in one file
// alike:
//
//   - Fountain (fountain.io): a character's name in capitals on a line of
//     its own, the speech on the lines below it; a parenthetical line
//     ("(quietly)") becomes a direction ([quietly]).
//   - A name and a colon before the speech on one line ("Anna: Where were
//     you?", "张三：你好"), as radio plays and chat logs are written; a
//     parenthetical after the name or at the speech's start becomes a
//     direction too.
//
// What is not dialogue is left out and counted: the title page, scene
// headings, transitions, notes ([[…]]), the boneyard (/* … */), sections
// and synopses, and action paragraphs, which with Narrate are spoken by a
// character called "Narrator" instead.

// MaxScreenplayBytes caps a screenplay read whole: a feature film's is
// about 200 KiB, and the studio's API carries it in a request of at most
// 1 MiB (app/server).
const MaxScreenplayBytes = 512 << 10

// MaxCharacters is how many characters a script can give voices to: the
// engine's speaker tags the studio casts (projects.MaxSpeakers).
const MaxCharacters = 16

// maxCharacterName caps a character's name (a cue longer than this is
// action, not a name).
const maxCharacterName = 40

// Narrator is the character who speaks the action with Narrate.
const Narrator = "Narrator"

// Screenplay is a screenplay as a script.
type Screenplay struct {
	// Script has one line per speech: "<|speaker:N|>words", a blank line
	// between scenes.
	Script string `json:"script"`
	// Characters speak as <|speaker:0|>, <|speaker:1|>, … in this order
	// (the order in which they first speak).
	Characters []Character `json:"characters"`
	Lines      int         `json:"lines"` // speeches in Script
	// LeftOut says what of the file is not in the script, and how much.
	LeftOut []LeftOut `json:"left_out"`
}

// Character is one speaker of a screenplay.
type Character struct {
	Name  string `json:"name"`
	Lines int    `json:"lines"` // their speeches
}

// LeftOut is one kind of what the script leaves out: "scene headings",
// "action paragraphs", … and how many.
type LeftOut struct {
	What  string `json:"what"`
	Count int    `json:"count"`
}

// ScreenplayOptions say how a screenplay is read.
type ScreenplayOptions struct {
	// Narrate gives the action paragraphs to a narrator (a character called
	// Narrator) instead of leaving them out.
	Narrate bool
}

var (
	sceneHeading   = regexp.MustCompile(`(?i)^(int|ext|est|int\.?/ext|i/e)[. ]`)
	colonSpeech    = regexp.MustCompile(`^(\p{L}[\p{L}\p{M}\p{N} .'’&-]*?)\s*(\(([^()]*)\))?\s*(:|：)(.*)$`)
	cueName        = regexp.MustCompile(`^\p{L}[\p{L}\p{M}\p{N} .'’&-]*$`)
	parenthetical  = regexp.MustCompile(`^\(([^()]*)\)$`)
	leadingParen   = regexp.MustCompile(`^\(([^()]*)\)\s*`)
	cueExtension   = regexp.MustCompile(`\s*\([^()]*\)\s*$`)
	emphasis       = regexp.MustCompile(`\*{1,3}([^*\s](?:[^*\n]*[^*\s])?)\*{1,3}`)
	underline      = regexp.MustCompile(`(^|[^\p{L}\p{N}])_([^_\s](?:[^_\n]*[^_\s])?)_($|[^\p{L}\p{N}])`)
	notes          = regexp.MustCompile(`(?s)\[\[.*?\]\]`)
	boneyard       = regexp.MustCompile(`(?s)/\*.*?\*/`)
	titlePageKey   = regexp.MustCompile(`(?i)^(title|credit|author|authors|source|draft date|date|contact|copyright|notes|revision|format)\s*:`)
	transitionLine = regexp.MustCompile(`^([^\p{Ll}]*TO:|FADE (IN|OUT)[.:]?|FADE TO BLACK\.?|THE END\.?)$`)
	// screenExtension is a cue's extension for the camera, not the voice.
	screenExtension = regexp.MustCompile(`(?i)^(v\.?o\.?|o\.?s\.?|o\.?c\.?|cont(inued|['’]?d)?\.?|off|pre-?lap|filtered|on (the )?(phone|radio|tv))$`)
)

// ParseScreenplay reads a screenplay. It refuses text that is not UTF-8,
// is larger than MaxScreenplayBytes, holds the engine's own markup (<|…|>)
// or has no dialogue, and one with more than MaxCharacters characters,
// each time saying why.
func ParseScreenplay(text string, opt ScreenplayOptions) (Screenplay, error) {
	switch {
	case len(text) > MaxScreenplayBytes:
		return Screenplay{}, fmt.Errorf("the screenplay is larger than %d KiB, the most that is read: import it in parts", MaxScreenplayBytes>>10)
	case !utf8.ValidString(text):
		return Screenplay{}, fmt.Errorf("the screenplay is not UTF-8 text")
	}
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	text = strings.TrimPrefix(text, "\uFEFF")
	if i := strings.Index(text, "<|"); i >= 0 {
		return Screenplay{}, fmt.Errorf("line %d holds the engine's markup (%q): a screenplay has none (the import writes the speaker tags)", 1+strings.Count(text[:i], "\n"), clip(text[i:], 16))
	}
	r := reader{opt: opt, index: map[string]int{}, left: map[string]int{}}
	// Notes and the boneyard may span lines: out before the paragraphs.
	text = r.cut(boneyard, text, "boneyard passages")
	text = r.cut(notes, text, "notes")
	paras := paragraphs(text)
	if len(paras) > 0 && titlePageKey.MatchString(paras[0][0]) {
		r.left["title page"] = 1
		paras = paras[1:]
	}
	for _, p := range paras {
		if err := r.paragraph(p); err != nil {
			return Screenplay{}, err
		}
	}
	if r.out.Lines == 0 {
		return Screenplay{}, fmt.Errorf("found no dialogue: write each speech as a name and a colon before it (\"Anna: Where were you?\"), or as Fountain does (the name in capitals on a line of its own, the speech below it)")
	}
	r.out.Script = r.script.String()
	r.out.LeftOut = []LeftOut{}
	for _, what := range leftOutOrder {
		if n := r.left[what]; n > 0 {
			r.out.LeftOut = append(r.out.LeftOut, LeftOut{What: what, Count: n})
		}
	}
	return r.out, nil
}

// leftOutOrder is the order LeftOut lists its kinds in.
var leftOutOrder = []string{"title page", "scene headings", "transitions", "action paragraphs", "sections and synopses", "notes", "boneyard passages", "page breaks"}

// reader is one screenplay being read.
type reader struct {
	opt    ScreenplayOptions
	out    Screenplay
	index  map[string]int // a character's key (characterKey) → speaker
	left   map[string]int
	script strings.Builder
	scene  bool // a scene heading came since the last speech
}

// cut removes re's matches from text, counting them as what.
func (r *reader) cut(re *regexp.Regexp, text, what string) string {
	return re.ReplaceAllStringFunc(text, func(m string) string {
		r.left[what]++
		// Keep its line breaks: what follows keeps its paragraphs.
		return strings.Repeat("\n", strings.Count(m, "\n"))
	})
}

// paragraphs splits text at blank lines into paragraphs of lines, each line
// trimmed.
func paragraphs(text string) [][]string {
	var out [][]string
	var cur []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// paragraph reads one paragraph: dialogue, or something left out.
func (r *reader) paragraph(p []string) error {
	first := p[0]
	switch {
	case strings.HasPrefix(first, "==="):
		r.left["page breaks"]++
		return nil
	case strings.HasPrefix(first, "#") || strings.HasPrefix(first, "="):
		r.left["sections and synopses"]++
		return nil
	case sceneHeading.MatchString(first) || (strings.HasPrefix(first, ".") && !strings.HasPrefix(first, "..")):
		r.left["scene headings"]++
		r.scene = true
		return nil
	case len(p) == 1 && (transitionLine.MatchString(first) || (strings.HasPrefix(first, ">") && !strings.HasSuffix(first, "<"))):
		r.left["transitions"]++
		return nil
	}
	if name, ok := cue(first); ok && len(p) > 1 {
		return r.speech(name, p[1:])
	}
	if _, _, ok := colonLine(first); ok {
		return r.colonSpeeches(p)
	}
	if !r.opt.Narrate {
		r.left["action paragraphs"]++
		return nil
	}
	for i, l := range p {
		p[i] = strings.TrimSuffix(strings.TrimPrefix(l, ">"), "<") // centred text
		p[i] = strings.TrimPrefix(strings.TrimPrefix(p[i], "!"), "~")
	}
	return r.add(Narrator, strings.Join(p, " "))
}

// cue says whether line is a Fountain character cue, and whose: a name in
// capitals (or forced with "@"), perhaps with an extension such as
// "(V.O.)" and the dual-dialogue caret, which are dropped.
func cue(line string) (string, bool) {
	forced := strings.HasPrefix(line, "@")
	name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "@"), "^"))
	name = cueExtension.ReplaceAllString(name, "")
	if len(name) > maxCharacterName || !cueName.MatchString(name) {
		return "", false
	}
	if forced {
		return name, true
	}
	upper := false
	for _, c := range name {
		if unicode.IsLower(c) {
			return "", false
		}
		upper = upper || unicode.IsUpper(c)
	}
	return name, upper
}

// speech reads a Fountain speech: its lines, a parenthetical line a
// direction.
func (r *reader) speech(name string, lines []string) error {
	parts := make([]string, 0, len(lines))
	for _, l := range lines {
		if m := parenthetical.FindStringSubmatch(l); m != nil {
			parts = append(parts, direction(m[1]))
			continue
		}
		parts = append(parts, strings.TrimPrefix(l, "~")) // lyrics
	}
	return r.add(name, strings.Join(parts, " "))
}

// colonSpeeches reads a paragraph whose first line is "Name: speech": each
// such line starts a speech, any other continues the one before.
func (r *reader) colonSpeeches(p []string) error {
	var name string
	var words []string // the speech's lines (gathered, not appended to one string: a long one stays linear)
	for _, l := range p {
		who, said, ok := colonLine(l)
		if !ok {
			words = append(words, l)
			continue
		}
		if name != "" {
			if err := r.add(name, strings.Join(words, " ")); err != nil {
				return err
			}
		}
		name, words = who, []string{said}
	}
	return r.add(name, strings.Join(words, " "))
}

// colonLine reads "Name: speech" (or "Name (direction): speech"): the name
// at most four words, the colon followed by a space or the line's end (so
// "http://x" and "At 10:30 we" are not speeches), a full-width colon
// ("张三：你好") by anything.
func colonLine(line string) (name, words string, ok bool) {
	m := colonSpeech.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	name, words = strings.TrimSpace(m[1]), m[5]
	if len(name) > maxCharacterName || len(strings.Fields(name)) > 4 {
		return "", "", false
	}
	if r, _ := utf8.DecodeRuneInString(words); m[4] == ":" && words != "" && !unicode.IsSpace(r) {
		return "", "", false
	}
	if m[2] != "" && !screenExtension.MatchString(strings.TrimSpace(m[3])) {
		words = direction(m[3]) + " " + words
	}
	return name, words, true
}

// add adds a speech by name to the script.
func (r *reader) add(name, words string) error {
	words = clean(words)
	if words == "" {
		return nil
	}
	key := characterKey(name)
	n, ok := r.index[key]
	if !ok {
		n = len(r.out.Characters)
		if n == MaxCharacters {
			return fmt.Errorf("the screenplay has more than %d characters (%q, the next, first speaks in speech %d): a script gives voices to %d speakers, so import it in parts", MaxCharacters, name, r.out.Lines+1, MaxCharacters)
		}
		r.index[key] = n
		r.out.Characters = append(r.out.Characters, Character{Name: strings.Join(strings.Fields(name), " ")})
	}
	r.out.Characters[n].Lines++
	if r.out.Lines > 0 {
		r.script.WriteString("\n")
		if r.scene {
			r.script.WriteString("\n")
		}
	}
	r.scene = false
	r.out.Lines++
	fmt.Fprintf(&r.script, "<|speaker:%d|>%s", n, words)
	return nil
}

// characterKey is the same for every way a name is written ("ANNA",
// "Anna", "anna ").
func characterKey(name string) string {
	return strings.ToLower(strings.Join(strings.Fields(name), " "))
}

// direction is a parenthetical as the engine's direction: "(quietly)" →
// "[quietly]".
func direction(s string) string {
	s = strings.Join(strings.Fields(strings.NewReplacer("[", "", "]", "").Replace(s)), " ")
	if s == "" {
		return ""
	}
	return "[" + s + "]"
}

// clean is a speech's words as the engine is given them: Fountain's
// emphasis marks gone (an escaped one kept as the mark), a leading
// parenthetical a direction, every run of white space one space.
func clean(words string) string {
	words = strings.Join(strings.Fields(words), " ")
	// An escaped mark (\* \_) is the mark itself, never emphasis: held
	// aside as a private-use character while emphasis goes.
	words = strings.NewReplacer(`\*`, "\uE000", `\_`, "\uE001").Replace(words)
	words = emphasis.ReplaceAllString(words, "$1")
	for range 2 { // "_a_ _b_": the match's boundary is shared
		words = underline.ReplaceAllString(words, "$1$2$3")
	}
	words = strings.NewReplacer("\uE000", "*", "\uE001", "_").Replace(words)
	if m := leadingParen.FindStringSubmatch(words); m != nil {
		words = direction(m[1]) + " " + words[len(m[0]):]
	}
	return strings.TrimSpace(words)
}

// clip is at most n bytes of s, cut at a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
