package takes

import (
	"fmt"
	"slices"
	"strings"

	"proscenium/app/studio"
)

// This file is the takes' size limit (Settings.TakesLimitBytes): which
// stored takes go, oldest first, when a new take or a lower limit needs the
// room. Lowering the limit never removes a take by itself: TakesLimitEffect
// says what a limit would remove, and only ApplyTakesLimit, naming exactly
// those takes (what the user confirmed), removes them.

// ErrConfirm: the change would remove takes; confirm it first.
var ErrConfirm = fmt.Errorf("%w: needs confirmation", studio.ErrBusy)

// TakesLimitEffect is what a takes limit would remove.
type TakesLimitEffect struct {
	Limit  int64       `json:"limit_bytes"`
	Remove []TakeBrief `json:"remove"` // oldest first; empty: nothing
	Bytes  int64       `json:"bytes"`  // on disk, of those
}

// TakeBrief names a take in a confirmation.
type TakeBrief struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// TakesLimitChange is a lower limit and the takes the user agreed to remove.
type TakesLimitChange struct {
	Limit  int64 `json:"limit_bytes"`
	Remove []int `json:"remove"`
}

// evictionsLocked lists the stored takes, oldest first, that must go for
// stored+extra bytes to fit limit (never keep, the take being saved).
func (l *List) evictionsLocked(limit, extra int64, keep *takeRecord) []*takeRecord {
	var out []*takeRecord
	stored := l.stored + extra
	for _, r := range l.list {
		if stored <= limit {
			break
		}
		if r.bytes > 0 && r != keep {
			out = append(out, r)
			stored -= r.bytes
		}
	}
	return out
}

// TakesLimitEffect says which takes a takes limit of limit bytes would
// remove now, changing nothing (the limit is checked by the settings).
func (l *List) TakesLimitEffect(limit int64) TakesLimitEffect {
	l.mu.Lock()
	defer l.mu.Unlock()
	return effectOf(limit, l.evictionsLocked(limit, 0, nil))
}

// CheckLimitLowered refuses (ErrConfirm) a takes limit lowered from old to
// limit that would remove takes: those are removed only through
// ApplyTakesLimit, once the user has confirmed them.
func (l *List) CheckLimitLowered(old, limit int64) error {
	if limit >= old {
		return nil
	}
	if e := l.TakesLimitEffect(limit); len(e.Remove) > 0 {
		return fmt.Errorf("%w: %s; confirm that first", ErrConfirm, e.describe())
	}
	return nil
}

func effectOf(limit int64, recs []*takeRecord) TakesLimitEffect {
	e := TakesLimitEffect{Limit: limit, Remove: []TakeBrief{}}
	for _, r := range recs {
		e.Remove = append(e.Remove, TakeBrief{ID: r.take.ID, Name: r.take.Name, Bytes: r.bytes})
		e.Bytes += r.bytes
	}
	return e
}

func (e TakesLimitEffect) ids() []int {
	ids := make([]int, len(e.Remove))
	for i, b := range e.Remove {
		ids[i] = b.ID
	}
	return ids
}

func (e TakesLimitEffect) describe() string {
	names := make([]string, len(e.Remove))
	for i, b := range e.Remove {
		names[i] = fmt.Sprintf("#%d", b.ID)
	}
	return fmt.Sprintf("a takes limit of %s removes take(s) %s (%s)", studio.ByteSize(e.Limit), strings.Join(names, ", "), studio.ByteSize(e.Bytes))
}

// ApplyTakesLimit removes the takes a takes limit of c.Limit needs gone,
// provided they are exactly c.Remove (what TakesLimitEffect listed and the
// user confirmed); otherwise it changes nothing and says what would go now.
// The caller then stores the limit in the settings.
func (l *List) ApplyTakesLimit(c TakesLimitChange) error {
	l.mu.Lock()
	if len(l.running) > 0 {
		l.mu.Unlock()
		return fmt.Errorf("%w: a take is running; change the takes limit after it ends", studio.ErrBusy)
	}
	effect := effectOf(c.Limit, l.evictionsLocked(c.Limit, 0, nil))
	if !slices.Equal(effect.ids(), c.Remove) && !(len(effect.Remove) == 0 && len(c.Remove) == 0) {
		l.mu.Unlock()
		return fmt.Errorf("%w: %s, not the ones confirmed; nothing was changed", ErrConfirm, effect.describe())
	}
	l.mu.Unlock()
	for _, id := range c.Remove {
		if _, err := l.DeleteTake(id); err != nil {
			return fmt.Errorf("applying the takes limit: %w", err)
		}
		l.events.Notice(studio.NoticeInfo, fmt.Sprintf("removed take #%d to fit the takes limit of %s", id, studio.ByteSize(c.Limit)))
	}
	return nil
}
