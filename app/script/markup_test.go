package script

import (
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Hello there.", "Hello there."},
		{"<|speaker:1|>[calm] Well [sighs], no.", "Well, no."},
		{"I <whisper>really</whisper> mean it", "I really mean it"},
		{"  many\n\n spaces\t here ", "many spaces here"},
		{"[laughs]", ""},
		{"a < b and [unclosed", "a < b and [unclosed"},
		{"<|speaker:0|>你好[笑]，世界。", "你好，世界。"},
		{"Stop [beat]! Now.", "Stop! Now."},
	} {
		if got := Words(c.in); got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMapText(t *testing.T) {
	got := MapText("<|speaker:1|>[calm] one <b>two</b> three [one]", strings.ToUpper)
	if want := "<|speaker:1|>[calm] ONE <b>TWO</b> THREE [one]"; got != want {
		t.Errorf("MapText = %q, want %q", got, want)
	}
}
