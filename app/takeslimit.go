package app

import (
	"fmt"
	"slices"
	"strings"
)

// This file is the takes' size limit (Settings.TakesLimitBytes): which
// stored takes go, oldest first, when a new take or a lower limit needs the
// room. Lowering the limit never removes a take by itself: TakesLimitEffect
// says what a limit would remove, and only ApplyTakesLimit, naming exactly
// those takes (what the user confirmed), removes them.

// ErrConfirm: the change would remove takes; confirm it first.
var ErrConfirm = fmt.Errorf("%w: needs confirmation", ErrBusy)

// TakesLimitEffect is what a takes limit would remove.
type TakesLimitEffect struct {
	Limit  int64       `json:"limit"`
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
	Limit  int64 `json:"limit"`
	Remove []int `json:"remove"`
}

// evictionsLocked lists the stored takes, oldest first, that must go for
// stored+extra bytes to fit limit (never keep, the take being saved).
func (s *Service) evictionsLocked(limit, extra int64, keep *takeRecord) []*takeRecord {
	var out []*takeRecord
	stored := s.takes.stored + extra
	for _, r := range s.takes.list {
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
// remove now, changing nothing.
func (s *Service) TakesLimitEffect(limit int64) (TakesLimitEffect, error) {
	st := s.Settings()
	st.TakesLimitBytes = limit
	if err := st.Validate(); err != nil {
		return TakesLimitEffect{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return effectOf(limit, s.evictionsLocked(limit, 0, nil)), nil
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
	return fmt.Sprintf("a takes limit of %s removes take(s) %s (%s)", byteSize(e.Limit), strings.Join(names, ", "), byteSize(e.Bytes))
}

// ApplyTakesLimit sets the takes limit and removes the takes it needs gone,
// provided they are exactly c.Remove (what TakesLimitEffect listed and the
// user confirmed); otherwise it changes nothing and says what would go now.
func (s *Service) ApplyTakesLimit(c TakesLimitChange) (Settings, error) {
	st := s.Settings()
	st.TakesLimitBytes = c.Limit
	if err := st.Validate(); err != nil {
		return s.Settings(), err
	}
	s.mu.Lock()
	if s.takes.running != nil {
		s.mu.Unlock()
		return s.Settings(), fmt.Errorf("%w: a take is running; change the takes limit after it ends", ErrBusy)
	}
	effect := effectOf(c.Limit, s.evictionsLocked(c.Limit, 0, nil))
	if !slices.Equal(effect.ids(), c.Remove) && !(len(effect.Remove) == 0 && len(c.Remove) == 0) {
		s.mu.Unlock()
		return s.Settings(), fmt.Errorf("%w: %s, not the ones confirmed; nothing was changed", ErrConfirm, effect.describe())
	}
	s.mu.Unlock()
	for _, id := range c.Remove {
		if _, err := s.DeleteTake(id); err != nil {
			return s.Settings(), fmt.Errorf("applying the takes limit: %w", err)
		}
		s.notice(NoticeInfo, fmt.Sprintf("removed take #%d to fit the takes limit of %s", id, byteSize(c.Limit)))
	}
	return s.setSettings(st, true)
}
