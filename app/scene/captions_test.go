package scene

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"proscenium/app/projects"
	"proscenium/app/script"
)

func TestSplitCues(t *testing.T) {
	long := "The storm had passed by morning, and the harbour lay still under a pale sky. " +
		"Nobody on the quay spoke of the night before; they mended nets, counted boats, and waited. " +
		"Then the bell rang."
	for _, c := range []struct {
		name string
		in   string
		want []string
	}{
		{"short", "Hello there.", []string{"Hello there."}},
		{"sentences", long, []string{
			"The storm had passed by morning, and the harbour lay still under a pale sky.",
			"Nobody on the quay spoke of the night before;",
			"they mended nets, counted boats, and waited. Then the bell rang.",
		}},
		// As few cues as fit, as even as the breaks allow.
		{"words", strings.Repeat("word ", 30) + "end", []string{
			strings.TrimSpace(strings.Repeat("word ", 15)),
			strings.Repeat("word ", 15) + "end",
		}},
		{"no spaces", strings.Repeat("字", 100), []string{strings.Repeat("字", 50), strings.Repeat("字", 50)}},
		{"cjk sentences", strings.Repeat("这是一句话。", 20), []string{strings.Repeat("这是一句话。", 10), strings.Repeat("这是一句话。", 10)}},
		{"a comma before a word", "Alpha beta gamma delta epsilon zeta eta theta, iota kappa lambda mu nu xi omicron pi rho sigma tau", []string{
			"Alpha beta gamma delta epsilon zeta eta theta,", "iota kappa lambda mu nu xi omicron pi rho sigma tau"}},
		{"a Latin word is never cut", strings.Repeat("x", 100), []string{strings.Repeat("x", 100)}},
		{"quote after a sentence", `He said "go." ` + strings.Repeat("And so on and on ", 5), []string{`He said "go."`, strings.TrimSpace(strings.Repeat("And so on and on ", 5))}},
	} {
		got := splitCues(c.in)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: splitCues gives\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}

func TestCueRows(t *testing.T) {
	if got := cueRows("Short enough."); got != "Short enough." {
		t.Errorf("one row: %q", got)
	}
	got := cueRows("they mended nets, counted boats, and waited. Then the bell rang.")
	rs := strings.Split(got, "\n")
	if len(rs) != 2 || utf8.RuneCountInString(rs[0]) > rowRunes || utf8.RuneCountInString(rs[1]) > rowRunes {
		t.Errorf("two rows of at most %d: %q", rowRunes, got)
	}
	if got := cueRows(strings.Repeat("字", 60)); got != strings.Repeat("字", 30)+"\n"+strings.Repeat("字", 30) {
		t.Errorf("no spaces: %q", got)
	}
}

// FuzzCaptions holds what any script's captions keep: no cue is empty or
// longer than the limit (unless it is one word), the cues hold every
// character of the words in order, and each cue is at most two rows.
func FuzzCaptions(f *testing.F) {
	f.Add("<|speaker:1|>[calm] Well [sighs], no. " + strings.Repeat("word, ", 40))
	f.Add(strings.Repeat("这是一句话。", 30))
	f.Add("a\u00a0b\u2028c — d… “e.” f")
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		words := script.Words(text)
		cues := splitCues(words)
		var joined strings.Builder
		for _, c := range cues {
			if c == "" {
				t.Fatalf("an empty cue from %q", text)
			}
			if utf8.RuneCountInString(c) > cueRunes && strings.Contains(c, " ") {
				t.Fatalf("cue %q is %d characters", c, utf8.RuneCountInString(c))
			}
			if n := strings.Count(cueRows(c), "\n"); n > 1 {
				t.Fatalf("cue %q in %d rows", c, n+1)
			}
			joined.WriteString(c)
		}
		strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if strip(joined.String()) != strip(words) {
			t.Fatalf("the cues %q lost text of %q", cues, words)
		}
	})
}

// speaking is a line's audio: silences and speech-level noise in turn,
// from the first silence.
func speaking(rate int, seconds ...float64) []float32 {
	var out []float32
	for i, s := range seconds {
		if i%2 == 0 {
			out = append(out, make([]float32, int(s*float64(rate)))...)
		} else {
			out = append(out, noise(uint64(i), rate, s, 0.05)...)
		}
	}
	return out
}

func TestCuesFollowTheAudio(t *testing.T) {
	const rate = 44100
	first := Line{Take: 1, Rate: rate, Voice: "Bea",
		Text: "<|speaker:1|>The storm had passed by morning, and the harbour lay still. Nobody on the quay spoke of the night before at all.",
		// 0.3 s quiet, 1.2 s speech, a 0.4 s pause, 1.0 s speech, 0.2 s quiet.
		PCM: speaking(rate, 0.3, 1.2, 0.4, 1.0, 0.2)}
	second := Line{Take: 2, Rate: rate, Text: "[whisper] Go.", PCM: speaking(rate, 0.5, 0.2, 0.1)}
	ex := projects.ExportSettings{GapSeconds: 0.5, TargetLUFS: -16, Format: "wav", Captions: projects.CaptionsVTT}
	res, err := Assemble("Harbour", []Line{first, second}, ex)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[1].Name != "Harbour.vtt" {
		t.Fatalf("files %v", names(res.Files))
	}
	type want struct{ start, end float64 }
	// The first line's two cues meet in its pause (1.5–1.9 s); the second
	// line begins at 3.1 + 0.5 s and speaks from 0.5 s into it, held a
	// second where the scene leaves room (it ends at 3.6 + 0.8).
	wants := []want{{0.3, 1.7}, {1.7, 2.9}, {4.1, 4.4}}
	if len(res.Cues) != len(wants) {
		t.Fatalf("cues %+v", res.Cues)
	}
	for i, w := range wants {
		c := res.Cues[i]
		if math.Abs(c.Start-w.start) > 0.011 || math.Abs(c.End-w.end) > 0.011 {
			t.Errorf("cue %d at %.3f–%.3f s, want %.2f–%.2f: %+v", i+1, c.Start, c.End, w.start, w.end, c)
		}
	}
	if res.Cues[0].Text != "The storm had passed by morning,\nand the harbour lay still." || res.Cues[0].Voice != "Bea" || res.Cues[2].Text != "Go." {
		t.Errorf("cues %+v", res.Cues)
	}
	vtt := string(res.Files[1].Data)
	if !strings.HasPrefix(vtt, "WEBVTT\n\n00:00:00.300 --> 00:00:01.700\n<v Bea>The storm") {
		t.Errorf("WebVTT begins %q", vtt[:min(len(vtt), 80)])
	}
}

func TestCaptionsRefused(t *testing.T) {
	line := Line{Take: 1, PCM: noise(3, 44100, 1, 0.05), Rate: 44100, Text: "Hi."}
	if _, err := Assemble("s", []Line{line}, projects.ExportSettings{TargetLUFS: -16, Format: "wav", Captions: "ass"}); err == nil || !strings.Contains(err.Error(), `captions "ass"`) {
		t.Errorf("captions ass: %v", err)
	}
}

// TestCaptionsReadByFFmpeg reads both formats with ffmpeg's own SubRip and
// WebVTT readers (not ours) and finds our cues' times and words.
func TestCaptionsReadByFFmpeg(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg is missing (make deps installs it)")
		}
		t.Skip("ffmpeg is missing (make deps installs it)")
	}
	const rate = 44100
	lines := []Line{
		{Take: 1, Rate: rate, Voice: "Ann & Bo", Text: "Is 3 < 4 --> yes? <whisper>Of course</whisper>, always. " + strings.Repeat("And the night went on and on. ", 3),
			PCM: speaking(rate, 0.25, 2, 0.3, 2.5, 0.1)},
		{Take: 2, Rate: rate, Text: "再见。", PCM: speaking(rate, 0.1, 0.6, 0.1)},
	}
	dir := t.TempDir()
	for _, format := range []string{projects.CaptionsSRT, projects.CaptionsVTT} {
		res, err := Assemble("s", lines, projects.ExportSettings{GapSeconds: 0.4, TargetLUFS: -16, Format: "wav", Captions: format})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "s."+format)
		if err := os.WriteFile(path, res.Files[1].Data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", path, "-f", "srt", "-").Output()
		if err != nil {
			t.Fatalf("ffmpeg reads %s: %v", format, err)
		}
		got := readSRT(t, out)
		if len(got) != len(res.Cues) {
			t.Fatalf("%s: ffmpeg reads %d cues, we wrote %d:\n%s", format, len(got), len(res.Cues), out)
		}
		for i, c := range res.Cues {
			text := c.Text
			if format == projects.CaptionsSRT {
				text = strings.ReplaceAll(text, "-->", "->")
			}
			if i == 0 && format == projects.CaptionsVTT && !bytes.Contains(res.Files[1].Data, []byte("<v Ann ＆ Bo>Is 3 &lt; 4 --&gt; yes?")) {
				t.Errorf("the first WebVTT cue is not escaped: %q", res.Files[1].Data)
			}
			if math.Abs(got[i].Start-c.Start) > 0.0006 || math.Abs(got[i].End-c.End) > 0.0006 || got[i].Text != text {
				t.Errorf("%s cue %d: ffmpeg reads %+v, we wrote %+v", format, i+1, got[i], c)
			}
		}
	}
}

// readSRT reads ffmpeg's SubRip output.
func readSRT(t *testing.T, data []byte) []Cue {
	t.Helper()
	times := regexp.MustCompile(`^(\d+):(\d\d):(\d\d),(\d\d\d) --> (\d+):(\d\d):(\d\d),(\d\d\d)$`)
	seconds := func(m []string) float64 {
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[i], 64)
		}
		return v[0]*3600 + v[1]*60 + v[2] + v[3]/1000
	}
	var cues []Cue
	for _, block := range bytes.Split(bytes.TrimSpace(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))), []byte("\n\n")) {
		rows := strings.Split(string(block), "\n")
		if len(rows) < 3 {
			t.Fatalf("a SubRip block of %d rows: %q", len(rows), block)
		}
		m := times.FindStringSubmatch(rows[1])
		if m == nil {
			t.Fatalf("no times in %q", rows[1])
		}
		cues = append(cues, Cue{Start: seconds(m[1:5]), End: seconds(m[5:9]), Text: strings.Join(rows[2:], "\n")})
	}
	return cues
}
