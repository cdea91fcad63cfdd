package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"proscenium/app/model"
)

// progress draws one status line on a terminal (stderr), rewritten in place:
// the bytes a model load has read, then the frames of a take and its
// real-time factor so far. Off (quiet, or not a terminal) it prints nothing.
type progress struct {
	w    io.Writer
	on   bool
	mu   sync.Mutex // load reports come from a goroutine
	last time.Time
	wide int // length of the line on screen, to blank what a shorter one leaves
}

// progressEvery spaces redraws: fast enough to look live, rare enough to cost
// nothing next to a frame.
const progressEvery = 100 * time.Millisecond

func (p *progress) load(l model.LoadProgress) {
	if l.Total <= 0 {
		return
	}
	p.draw(l.Done, fmt.Sprintf("loading %s: %.0f of %.0f MB", l.Dir, float64(l.Read)/1e6, float64(l.Total)/1e6))
}

// frames: done of max frames, audio seconds made in elapsed. The last
// frame is always drawn.
func (p *progress) frames(done, max int, audio float64, elapsed time.Duration) {
	line := fmt.Sprintf("frame %d of at most %d, %.1f s of audio", done, max, audio)
	if audio > 0 {
		line += fmt.Sprintf(", real-time factor %.2f", elapsed.Seconds()/audio)
	}
	p.draw(done == max, line)
}

// end clears the line so the next message starts on a clean one.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && p.wide > 0 {
		fmt.Fprintf(p.w, "\r%*s\r", p.wide, "")
		p.wide = 0
	}
}

func (p *progress) draw(force bool, line string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); force || now.Sub(p.last) >= progressEvery {
		p.last = now
		pad := max(p.wide-len(line), 0)
		fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
		p.wide = len(line)
	}
}

// isTerminal reports whether f is a terminal (a character device; /dev/null
// is one too, where the lines are lost anyway).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
