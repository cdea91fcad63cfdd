//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"proscenium/engine/drama3"
)

// The voice prefix cache on the GPU (make-tiny checkpoints): a take in a
// voice the cache holds draws what the same take on a backend without a
// cache draws, every logit bit for bit (teacher-forced frames) and every code
// (free-running seeds, pipelined); a voice cached under one numerics policy
// is not restored under the other; when the pool refuses a take's memory, a
// cached voice is dropped and the take runs.

func TestFramesPrefixCacheMatchesUncached(t *testing.T) {
	eachTinyCheckpoint(t, func(t *testing.T, dir string) { testPrefixCache(t, dir, false) })
}

// TestFramesPrefixCacheInHostMemory: under a host tier (experts in host
// memory) the snapshots live in pinned host memory, the tier's account, and
// take no device memory; a take restored from one draws what the same take
// draws on a backend of the same tier without a cache, bit for bit.
func TestFramesPrefixCacheInHostMemory(t *testing.T) {
	eachTinyCheckpoint(t, func(t *testing.T, dir string) { testPrefixCache(t, dir, true) })
}

// hostTierBudget is device bytes under which the checkpoint's frames load
// with experts in host memory: each load under a cap a byte below what the
// one before admitted gives something up (longer prefill passes, the
// tower's tables, then experts) until experts leave the device.
func hostTierBudget(t *testing.T, ck *drama3.Checkpoint, opt FramesOptions) int64 {
	t.Helper()
	old := dev.Pool.Stats(DeviceMem).Cap
	defer dev.Pool.SetCap(DeviceMem, old)
	var budget int64
	for range 16 {
		held := dev.Pool.Stats(DeviceMem).Used
		if budget > 0 {
			dev.Pool.SetCap(DeviceMem, held+budget)
		}
		f, err := LoadFrames(dev, ck, nil, opt, nil)
		if err != nil {
			t.Fatalf("a load under a budget of %d bytes: %v", budget, err)
		}
		tier, admitted := f.Tier(), f.Admitted()
		f.Close()
		if tier.Tier == TierHostExperts {
			t.Logf("host tier under %d bytes: %s", budget, tier)
			return budget
		}
		budget = admitted - 1
	}
	t.Fatal("no host tier after 16 loads, each under a byte less than the one before admitted")
	return 0
}

// loadUnder loads the checkpoint's frames with budget device bytes beside
// what the pool holds (0: no cap).
func loadUnder(t *testing.T, ck *drama3.Checkpoint, opt FramesOptions, budget int64) *Frames {
	t.Helper()
	if budget > 0 {
		old := dev.Pool.Stats(DeviceMem).Cap
		dev.Pool.SetCap(DeviceMem, dev.Pool.Stats(DeviceMem).Used+budget)
		defer dev.Pool.SetCap(DeviceMem, old)
	}
	f, err := LoadFrames(dev, ck, nil, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sameLogBits(a, b drama3.LogitsLog) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d logits vectors, want %d", len(a), len(b))
	}
	for k, want := range b {
		got := a[k]
		if len(got) != len(want) {
			return fmt.Errorf("frame %d codebook %d: %d logits, want %d", k[0], k[1], len(got), len(want))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				return fmt.Errorf("frame %d codebook %d logit %d: %g, want %g", k[0], k[1], i, got[i], want[i])
			}
		}
	}
	return nil
}

func testPrefixCache(t *testing.T, dir string, inHost bool) {
	ck, pb := engineWithPrompts(t, dir)
	const capacity = 600
	plainOpt, cachedOpt := FramesOptions{Capacity: capacity, PrefixCacheBytes: -1}, FramesOptions{Capacity: capacity}
	var budget int64 // each load's device bytes (0: no cap)
	if inHost {
		// Three host layers: two staged by each pass, the home one held on the stage.
		budget = hostLayersBudget(t, ck, plainOpt, 3)
	}
	plain := loadUnder(t, ck, plainOpt, budget)
	defer plain.Close()
	cached := loadUnder(t, ck, cachedOpt, budget)
	defer cached.Close()
	if plain.PrefixCache() != nil || cached.PrefixCache() == nil {
		t.Fatal("PrefixCacheBytes -1 should keep no cache, 0 the default one")
	}
	if pt, ct := plain.Tier(), cached.Tier(); inHost != cached.PrefixCacheInHost() ||
		pt.Tier != ct.Tier || pt.DeviceLayers != ct.DeviceLayers || pt.PrefillRows != ct.PrefillRows || pt.NoDrawnTables != ct.NoDrawnTables {
		t.Fatalf("the two loads' tiers: without a cache %s, with one %s (cache in host memory: %v, want %v)", pt, ct, cached.PrefixCacheInHost(), inHost)
	}
	pinnedLoaded := dev.Pool.Stats(HostTierMem).Used // both loads' pinned weights, before any snapshot
	entries := cached.CodebookEntries()
	r := newRand(t)
	voice := func(frames int) drama3.Reference { return randomVoice(r, entries, frames) }
	prompt := func(text string, refs ...drama3.Reference) drama3.Prompt {
		return voicePrompt(t, pb, entries, text, refs...)
	}
	forced := randomFrames(r, entries, 12)
	take := func(b *Frames, p drama3.Prompt) prefixTrace { return takeTrace(t, b, p, forced) }
	same := func(what string, got, want prefixTrace) { t.Helper(); sameTrace(t, what, got, want) }

	one, two := voice(70), voice(45)
	for i, p := range []drama3.Prompt{
		prompt("Hello there, this is a take in a cloned voice.", one),
		prompt("And here is a second line in the same voice.", one),
		prompt("Two voices now, one after the other.", one, two),
		prompt("Two voices again, a different line.", one, two),
	} {
		want := take(plain, p)
		got := take(cached, p)
		same(fmt.Sprintf("prompt %d", i), got, want)
		out := cached.LastPrefix()
		if out.Rows != p.VoicePrefix() || !out.Restored || out.Prefilled != len(p)-out.Rows {
			t.Fatalf("prompt %d: last prefix %+v after a take that restored it (voice prefix %d of %d rows)", i, out, p.VoicePrefix(), len(p))
		}
		t.Logf("prompt %d: %d rows, %d restored, %d prefilled", i, len(p), out.Rows, out.Prefilled)
	}
	st := cached.PrefixCache().Stats()
	t.Logf("cache: %+v", st)
	if st.Entries != 2 || st.Misses != 2 {
		t.Fatalf("cache %+v: want 2 voices, each missed once", st)
	}
	// Under the host tier the snapshots are the tier's pinned memory beyond
	// the cached load's weights; the device holds none of them.
	if inHost {
		if snaps := dev.Pool.Stats(HostTierMem).Used - pinnedLoaded; snaps != st.Bytes || st.Cap != cached.Tier().VoiceCacheHost {
			t.Fatalf("host tier: %d bytes of snapshots in the tier's pinned memory, the cache holds %d (cap %d, the tier granted %d)",
				snaps, st.Bytes, st.Cap, cached.Tier().VoiceCacheHost)
		}
		return // a take's device memory frees no snapshot here: nothing to drop
	}

	// The numerics policy is part of the key: the first voice, cached under
	// the device's policy, is prefilled again under the other one.
	prev, other := dev.Numerics, drama3.NumericsExact
	if prev.Exact() {
		other = drama3.NumericsFast
	}
	again := prompt("The same voice under the other numerics policy.", one)
	func() {
		dev.Numerics = other
		defer func() { dev.Numerics = prev }()
		promptTake(t, cached, again, 1, 1, nil)
	}()
	if out := cached.LastPrefix(); out.Restored || out.Prefilled != len(again) {
		t.Fatalf("a take under numerics %s started from the voice cached under %s: %+v", other, prev, out)
	}

	// Memory short: the pool's cap at what is held now. A take in a new
	// voice needs memory for its prompt rows: the cached voices are dropped
	// (least recently used first) and the take draws what it draws on the
	// backend without a cache.
	for range 4 { // enough cached bytes to free for the new take's buffers
		take(cached, prompt("Filling the cache.", voice(60)))
	}
	before := cached.PrefixCache().Stats()
	three := prompt("A voice that finds no room.", voice(50))
	want := take(plain, three)
	old := dev.Pool.Stats(DeviceMem).Cap
	dev.Pool.SetCap(DeviceMem, dev.Pool.Stats(DeviceMem).Used)
	defer dev.Pool.SetCap(DeviceMem, old)
	got := take(cached, three)
	dev.Pool.SetCap(DeviceMem, old)
	same("memory short", got, want)
	after := cached.PrefixCache().Stats()
	t.Logf("memory short: cache %+v before, %+v after", before, after)
	if after.Evictions <= before.Evictions {
		t.Fatalf("the take ran with the pool at its cap and no cached voice was dropped (%+v, then %+v)", before, after)
	}
}

// randomVoice is a reference of frames random frames.
func randomVoice(r *rand.Rand, entries []int, frames int) drama3.Reference {
	return drama3.Reference{Transcript: "A reference line, said once and clearly.", Codes: randomFrames(r, entries, frames)}
}

// randomFrames is n frames of random codes.
func randomFrames(r *rand.Rand, entries []int, n int) [][]int {
	codes := make([][]int, n)
	for f := range codes {
		codes[f] = make([]int, len(entries))
		for c, e := range entries {
			codes[f][c] = r.IntN(e)
		}
	}
	return codes
}

// voicePrompt is text's prompt in the reference voices refs.
func voicePrompt(t *testing.T, pb *drama3.PromptBuilder, entries []int, text string, refs ...drama3.Reference) drama3.Prompt {
	t.Helper()
	p, err := pb.ReferenceVoice(text, refs, entries)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// prefixTrace is a take's teacher-forced logits and two free-running
// seeds' codes (pipelined).
type prefixTrace struct {
	logits drama3.LogitsLog
	codes  [][][]int
}

// takeTrace runs p on b teacher-forced to forced, then free-running with
// seeds 1 and 2 for 20 frames each.
func takeTrace(t *testing.T, b *Frames, p drama3.Prompt, forced [][]int) prefixTrace {
	t.Helper()
	tr := prefixTrace{logits: drama3.LogitsLog{}}
	b.TapLogits(tr.logits.Tap)
	promptTake(t, b, p, 1, len(forced), forced)
	b.TapLogits(nil)
	b.SetPipeline(true)
	defer b.SetPipeline(false)
	for seed := uint64(1); seed <= 2; seed++ {
		codes, _ := promptTake(t, b, p, seed, 20, nil)
		tr.codes = append(tr.codes, codes)
	}
	return tr
}

// sameTrace fails t unless got is want, every logit bit for bit and every code.
func sameTrace(t *testing.T, what string, got, want prefixTrace) {
	t.Helper()
	if err := sameLogBits(got.logits, want.logits); err != nil {
		t.Fatalf("%s: teacher-forced logits differ from the uncached take's: %v", what, err)
	}
	if !reflect.DeepEqual(got.codes, want.codes) {
		t.Fatalf("%s: free-running codes %v, the uncached take's %v", what, got.codes, want.codes)
	}
}

// TestFramesSplitPrefix: under a host tier (three host layers) a take in a
// voice the cache does not hold runs its voice prefix's last pass and its
// script as one split pass (prefillSplit), whose second part reads the
// layers the first staged, and draws what the two passes draw, bit for bit:
// with the load's passes (the prompt one pass's rows), and with passes of
// BackboneChunk rows, where the prefix's first pass runs alone before the
// split. (That a voice kept by a split pass restores to the same takes is
// TestFramesPrefixCacheInHostMemory's: its first take in each voice splits.)
func TestFramesSplitPrefix(t *testing.T) {
	eachTinyCheckpoint(t, func(t *testing.T, dir string) {
		ck, pb := engineWithPrompts(t, dir)
		for _, rows := range []int{0, BackboneChunk} {
			t.Run(fmt.Sprintf("passes %d", rows), func(t *testing.T) {
				if rows > 0 {
					defer func(n int, set bool) { prefillRows, prefillRowsSet = n, set }(prefillRows, prefillRowsSet)
					prefillRows, prefillRowsSet = rows, true
				}
				opt := FramesOptions{Capacity: 600, PrefixCacheBytes: -1}
				f := loadUnder(t, ck, opt, hostLayersBudget(t, ck, opt, 3))
				defer f.Close()
				entries := f.CodebookEntries()
				r := newRand(t)
				forced := randomFrames(r, entries, 12)
				chunk := f.bb.Plan.Chunk
				// A voice whose prefix's last pass and script fit one pass
				// (and, with short passes, whose prefix takes more than one).
				var p drama3.Prompt
				for frames := 40; ; frames++ {
					p = voicePrompt(t, pb, entries, "A line in a voice of its own.", randomVoice(r, entries, frames))
					prefix := p.VoicePrefix()
					from := (prefix - 1) / chunk * chunk
					if f.bb.SplitFits(prefix-from, len(p)-from) && (rows == 0 || from > 0) {
						t.Logf("%d rows, voice prefix %d, passes of %d: the split pass from row %d", len(p), prefix, chunk, from)
						break
					}
					if frames == 200 {
						t.Fatalf("no voice of 40–200 frames splits in passes of %d rows", chunk)
					}
				}
				defer func(on bool) { SplitPrefix = on }(SplitPrefix)
				SplitPrefix = false
				want := takeTrace(t, f, p, forced)
				if f.lastSplit {
					t.Fatal("SplitPrefix false ran a split pass")
				}
				SplitPrefix = true
				got := takeTrace(t, f, p, forced)
				if !f.lastSplit {
					t.Fatal("no split pass under the host tier")
				}
				sameTrace(t, "split pass", got, want)
			})
		}
	})
}
