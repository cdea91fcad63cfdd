package drama3

import (
	"slices"
	"strings"
	"testing"
)

// idSemantic0 is <|semantic:0|> in the test tokenizer (after <|voice|>,
// <|text|>, <|interleave|> and the 16 speaker tags).
const idSemantic0 = idVoice + 3 + SpeakerTokens

var testEntries = []int{4096, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}

func testFrames(n, seed int) [][]int {
	out := make([][]int, n)
	for f := range out {
		out[f] = make([]int, len(testEntries))
		for c := range out[f] {
			out[f][c] = (seed*7919 + f*31 + c*17) % testEntries[c]
		}
	}
	return out
}

// TestReferenceVoiceRows: the rows are exactly MODEL.md §4's layout, built
// here from its pieces: the system text with one speaker tag per transcript,
// the references' frames in order as audio rows (<|semantic:c0|> with the
// frame's codes), then the user turn of the default-voice prompt.
func TestReferenceVoiceRows(t *testing.T) {
	tok := drama3Tok(t)
	pb, err := NewPromptBuilder(tok, PromptLimits{})
	if err != nil {
		t.Fatal(err)
	}
	refs := []Reference{
		{Transcript: "  Hello there, I am Ada. ", Codes: testFrames(3, 1)},
		{Transcript: "And I am [softly] Bob.", Codes: testFrames(2, 2)},
	}
	p, err := pb.ReferenceVoice("<|speaker:1|>Line one. <|speaker:0|>Line two.", refs, testEntries)
	if err != nil {
		t.Fatal(err)
	}
	ord := func(s string) []int {
		ids, err := tok.EncodeOrdinary(s)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	var want Prompt
	text := func(ids ...int) { want = append(want, TextPrompt(ids)...) }
	text(idImStart)
	text(ord("system\nconvert the provided text to speech reference to the following:\n\nText:\n")...)
	text(idSpeaker0)
	text(ord("Hello there, I am Ada.\n")...)
	text(idSpeaker0 + 1)
	text(ord("And I am [softly] Bob.\n\nSpeech:\n")...)
	for _, r := range refs {
		for _, codes := range r.Codes {
			want = append(want, PromptRow{Token: idSemantic0 + codes[0], Codes: codes})
		}
	}
	text(idImEnd, idNewline, idImStart, idUser, idNewline, idSpeaker0+1)
	text(ord("Line one. ")...)
	text(idSpeaker0)
	text(ord("Line two.")...)
	text(idImEnd, idNewline, idImStart, idAssistant, idNewline, idVoice)
	if len(p) != len(want) {
		t.Fatalf("%d rows, want %d:\n%v\n%v", len(p), len(want), p.Tokens(), want.Tokens())
	}
	for i := range want {
		if p[i].Token != want[i].Token || !slices.Equal(p[i].Codes, want[i].Codes) || (p[i].Codes == nil) != (want[i].Codes == nil) {
			t.Fatalf("row %d: %+v, want %+v", i, p[i], want[i])
		}
	}
	if p.AudioRows() != 5 {
		t.Errorf("%d audio rows, want 5", p.AudioRows())
	}
	// The prompt owns its codes.
	refs[0].Codes[0][0] = 4095
	if p[slices.IndexFunc(p, func(r PromptRow) bool { return r.Codes != nil })].Codes[0] == 4095 {
		t.Error("the prompt shares the caller's code slices")
	}
}

// TestReferenceVoiceNone: no references is the default-voice prompt.
func TestReferenceVoiceNone(t *testing.T) {
	pb, err := NewPromptBuilder(drama3Tok(t), PromptLimits{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pb.ReferenceVoice("Hello.", nil, testEntries)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := pb.DefaultVoice("Hello.")
	if !slices.Equal(p.Tokens(), ids) || p.AudioRows() != 0 {
		t.Errorf("rows %v, want %v", p.Tokens(), ids)
	}
}

// TestReferenceVoiceRefuses: every bad input names its problem.
func TestReferenceVoiceRefuses(t *testing.T) {
	pb, err := NewPromptBuilder(drama3Tok(t), PromptLimits{MaxPromptTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	ok := Reference{Transcript: "Hi.", Codes: testFrames(2, 1)}
	bad := func(f func(*Reference)) []Reference {
		r := Reference{Transcript: ok.Transcript, Codes: testFrames(2, 1)}
		f(&r)
		return []Reference{r}
	}
	many := make([]Reference, MaxReferences+1)
	for i := range many {
		many[i] = ok
	}
	for _, tc := range []struct {
		name string
		text string
		refs []Reference
		want string
	}{
		{"empty text", "  ", []Reference{ok}, "empty"},
		{"too many", "Hi.", many, "17 references, at most 16"},
		{"empty transcript", "Hi.", bad(func(r *Reference) { r.Transcript = " " }), "reference 0 transcript: text: empty"},
		{"structural transcript", "Hi.", bad(func(r *Reference) { r.Transcript = "a <|im_end|>" }), "not allowed"},
		{"tagged transcript", "Hi.", bad(func(r *Reference) { r.Transcript = "<|speaker:3|>Hi" }), "speaker tags are not allowed there"},
		{"no frames", "Hi.", bad(func(r *Reference) { r.Codes = nil }), "reference 0 has no frames"},
		{"short frame", "Hi.", bad(func(r *Reference) { r.Codes[1] = r.Codes[1][:9] }), "frame 1: 9 codes, the model has 10"},
		{"code range", "Hi.", bad(func(r *Reference) { r.Codes[0][3] = 1024 }), "code 1024 of codebook 3 outside [0, 1024)"},
		{"negative", "Hi.", bad(func(r *Reference) { r.Codes[0][0] = -1 }), "code -1 of codebook 0"},
		{"too long", "Hi.", bad(func(r *Reference) { r.Codes = testFrames(300, 1) }), "of them reference audio), more than the limit of 200"},
	} {
		_, err := pb.ReferenceVoice(tc.text, tc.refs, testEntries)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
