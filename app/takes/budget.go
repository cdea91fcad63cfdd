package takes

import (
	"fmt"

	"proscenium/app/studio"
)

// This file is what the takes list removes by itself, and what it never
// does. Speech-API takes and studio takes have separate budgets: API takes
// hold at most half the takes limit on disk and maxTakes entries in the
// list, and a new API take makes room only among API takes, so API traffic
// never pushes out the user's studio takes; a new studio take makes room
// among API takes first, then among studio takes. A named take is never
// removed automatically (only DeleteTake and a confirmed lower limit remove
// it). Every removal sends EventTakeRemoved and a notice naming the take.
// A take that cannot be stored keeps its audio in memory, within
// maxUnsavedBytes for all of them, and the notice says so.

// maxTakes is how many takes of each source the list keeps (the oldest
// unnamed ones dropped, and deleted from disk, first); the size limit
// usually bites long before.
const maxTakes = 1000

// maxUnsavedBytes bounds the audio kept in memory for takes that were not
// stored (a read-only takes folder, a take over the limit, no folder). A
// variable for the tests.
var maxUnsavedBytes int64 = 256 << 20

// protected reports whether the take is never removed automatically: the
// user named it.
func (t *Take) protected() bool { return t.Name != "" }

// apiLimit is the part of the takes limit API takes may hold.
func apiLimit(limit int64) int64 { return limit / 2 }

// removal is a take the list removed by itself and why.
type removal struct {
	rec *takeRecord
	why string
}

// autoEvictionsLocked lists the takes, oldest first, to remove so that rec
// (size bytes, about to be stored) fits its budget within limit, never a
// take pinned names (a project's chosen take); fits is
// false, and nothing is listed, when removing every take its budget may
// remove would not make room.
func (l *List) autoEvictionsLocked(rec *takeRecord, limit, size int64, pinned map[int]bool) (out []*takeRecord, fits bool) {
	api := rec.take.Source == SourceAPI
	var apiStored int64
	for _, r := range l.list {
		if r.take.Source == SourceAPI {
			apiStored += r.bytes
		}
	}
	stored := l.stored
	enough := func() bool { return stored+size <= limit && (!api || apiStored+size <= apiLimit(limit)) }
	take := func(r *takeRecord) {
		out = append(out, r)
		stored -= r.bytes
		if r.take.Source == SourceAPI {
			apiStored -= r.bytes
		}
	}
	// API takes first (the only candidates of an API take), then the
	// studio's unnamed takes, oldest first.
	for _, fromAPI := range []bool{true, false} {
		if !fromAPI && api {
			break
		}
		for _, r := range l.list {
			if enough() {
				return out, true
			}
			if r != rec && r.bytes > 0 && !r.take.protected() && !pinned[r.take.ID] && (r.take.Source == SourceAPI) == fromAPI {
				take(r)
			}
		}
	}
	if enough() {
		return out, true
	}
	return nil, false
}

// trimListLocked drops the oldest unnamed, finished takes of a source that
// has more than maxTakes in the list, and the oldest unsaved takes while
// their audio in memory is over maxUnsavedBytes; it removes their files
// and returns them for the caller to announce (after unlocking).
func (l *List) trimListLocked() []removal {
	count := map[string]int{}
	var unsaved int64
	for _, r := range l.list {
		count[r.take.Source]++
		if r.bytes == 0 && r.take.State != TakeRunning {
			unsaved += int64(4 * len(r.pcm))
		}
	}
	var out []removal
	keep := l.list[:0]
	for _, r := range l.list {
		drop := ""
		switch {
		case r.take.State == TakeRunning:
		case count[r.take.Source] > maxTakes && !r.take.protected():
			drop = fmt.Sprintf("to keep at most %d %s takes", maxTakes, r.take.Source)
		case r.bytes == 0 && unsaved > maxUnsavedBytes:
			drop = fmt.Sprintf("its audio was not saved and unsaved takes may hold at most %s in memory", studio.ByteSize(maxUnsavedBytes))
		}
		if drop == "" {
			keep = append(keep, r)
			continue
		}
		count[r.take.Source]--
		if r.bytes > 0 {
			l.stored -= r.bytes
			l.store.remove(r.take.ID)
		} else {
			unsaved -= int64(4 * len(r.pcm))
		}
		out = append(out, removal{rec: r, why: drop})
	}
	clear(l.list[len(keep):])
	l.list = keep
	return out
}

// announce sends the removal of each take, with a notice naming it.
func (l *List) announce(removed []removal) {
	for _, r := range removed {
		l.events.Send(studio.EventTakeRemoved, r.rec.take.ID)
		l.events.Notice(studio.NoticeInfo, fmt.Sprintf("removed take #%d (%s) %s", r.rec.take.ID, studio.ByteSize(max(r.rec.bytes, int64(4*len(r.rec.pcm)))), r.why))
	}
}
