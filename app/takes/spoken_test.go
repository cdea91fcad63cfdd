package takes

import (
	"context"
	"strings"
	"sync"
	"testing"

	"proscenium/app/internal/enginetest"
	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
)

// heardEngine is enginetest.PCM that keeps the texts it was given.
type heardEngine struct {
	enginetest.PCM
	mu    sync.Mutex
	heard []string
}

func (e *heardEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	e.mu.Lock()
	e.heard = append(e.heard, req.Text)
	e.mu.Unlock()
	return e.PCM.Synthesize(ctx, req, emit)
}

// TestSpokenText: the engine is given the text as Config.Spoken rewrites
// it, studio and speech API takes alike, and the take keeps both; a text
// the rewrite leaves alone records no spoken text.
func TestSpokenText(t *testing.T) {
	eng := &heardEngine{PCM: enginetest.PCM{Frames: 3}}
	l, _ := Open(Config{Events: studio.NewHub(), Limit: func() int64 { return settings.DefaultTakesLimit },
		Engine: func() (api.Engine, int, error) { return eng, enginetest.SampleRate, nil },
		Spoken: func(text string) string { return strings.ReplaceAll(text, "Nguyen", "Win") }})
	t.Cleanup(func() { l.Stop() })

	studioTake := speakAndWait(t, l, speech("Mr Nguyen."))
	plain := speakAndWait(t, l, speech("Nobody."))
	if _, err := l.Recorded(eng).Synthesize(context.Background(), speech("Ms Nguyen."), func(api.Event) {}); err != nil {
		t.Fatal(err)
	}
	var apiTake Take
	for _, x := range l.Takes() {
		if x.Source == SourceAPI {
			apiTake = x
		}
	}
	if got := strings.Join(eng.heard, "|"); got != "Mr Win.|Nobody.|Ms Win." {
		t.Errorf("the engine heard %q", got)
	}
	for _, c := range []struct {
		take         Take
		text, spoken string
	}{{studioTake, "Mr Nguyen.", "Mr Win."}, {plain, "Nobody.", ""}, {apiTake, "Ms Nguyen.", "Ms Win."}} {
		if c.take.Request.Text != c.text || c.take.Spoken != c.spoken {
			t.Errorf("take #%d keeps %q, spoken %q; want %q, %q", c.take.ID, c.take.Request.Text, c.take.Spoken, c.text, c.spoken)
		}
	}
}
