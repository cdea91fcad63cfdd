package take

import (
	"context"
	"fmt"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// This file primes the voice cache (api.VoicePrimer): a voice's prompt
// prefilled, its state at the voice prefix kept by the backend as a take's
// would be, and no frame made. The studio and the speech API prime a voice
// when it is created, so that its first take starts from the cache.

var _ api.VoicePrimer = (*Engine)(nil)

// primeScript is the text of a prime's prompt. The backend caches the state
// at the voice prefix, which does not depend on the text; the text only
// gives the prompt the rows after the prefix that VoicePrefix asks for (the
// prompt's closing tokens already do).
const primeScript = "Hello."

// PrimeVoice prefills refs' voice into the backend's voice cache without
// making a take (api.VoicePrimer). It waits until no take is live or
// waiting (a take that arrives while it waits goes first), begins as a take
// in refs' voice would, and ends there; when the cache holds the voice by
// then (a take in it cached it meanwhile), it begins nothing. It fails with
// api.ErrNoVoiceCache when the backend keeps no cache, with
// api.ErrVoiceNotKept when the cache did not keep the voice's state, and
// with ctx's error when ctx ends or the engine closes first.
func (e *Engine) PrimeVoice(ctx context.Context, refs []api.Reference) (*api.Primed, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	cache, err := e.voiceCache(refs)
	if err != nil {
		return nil, err
	}
	ctx, leave, err := e.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()

	start := time.Now()
	rows, key, err := e.primePrompt(refs)
	if err != nil {
		return nil, err
	}
	refused := cache.Stats().Refusals
	j := newJob(ctx)
	j.prime, j.held = true, func() bool { _, ok := cache.Holds(key); return ok }
	take := drama3.Take{Prompt: rows.Tokens(), Rows: rows, Sampling: api.DefaultSampling(), MaxFrames: 1, Start: start}
	if j.run, err = drama3.NewTakeRun(e.cfg.Takes, e.sched.newID(), take, drama3.Listener{}); err != nil {
		return nil, err
	}
	if !e.sched.submit(j) {
		return nil, fmt.Errorf("engine is closed")
	}
	<-j.done
	if j.err != nil {
		return nil, j.err
	}
	held, _ := cache.Holds(key) // what the voice's state holds (0: not kept)
	if j.found {
		return &api.Primed{PrefixRows: rows.VoicePrefix(), Cached: true, Bytes: held, WaitedMs: api.Millis(time.Since(start)), Key: key.String()}, nil
	}
	res := j.res
	if res.Reason == drama3.FinishCancel {
		return nil, fmt.Errorf("priming the voice stopped: %w", context.Cause(ctx))
	}
	if res.Prefix == nil {
		return nil, api.ErrNoVoiceCache
	}
	if held == 0 {
		return nil, notKept(cache.Stats(), refused)
	}
	prefill := res.Stages[drama3.StagePrefill]
	return &api.Primed{
		PrefixRows: res.Prefix.Rows,
		Cached:     res.Prefix.Restored,
		Bytes:      held,
		WaitedMs:   api.Millis(res.Elapsed - prefill),
		PrefillMs:  api.Millis(prefill),
		Key:        key.String(),
	}, nil
}

// VoiceKey is the key the voice cache keeps refs' voice under, the one
// PrimeVoice's Primed.Key would give, without priming it
// (api.VoicePrimer): the prompt is built and its voice prefix named, and
// nothing runs on the backend.
func (e *Engine) VoiceKey(refs []api.Reference) (string, error) {
	if _, err := e.voiceCache(refs); err != nil {
		return "", err
	}
	_, key, err := e.primePrompt(refs)
	if err != nil {
		return "", err
	}
	return key.String(), nil
}

// voiceCache is the backend's voice cache for a prime or key of refs'
// voice: api.ErrInvalidRequest without references, api.ErrNoVoiceCache
// when the backend keeps none.
func (e *Engine) voiceCache(refs []api.Reference) (*drama3.PrefixCache, error) {
	if len(refs) == 0 {
		return nil, fmt.Errorf("%w: a voice's references are needed (the model's own voice has no prefix to keep)", api.ErrInvalidRequest)
	}
	cacher, ok := e.cfg.Takes.(drama3.TakePrefixCacher)
	if !ok {
		return nil, api.ErrNoVoiceCache
	}
	cache := cacher.PrefixCache()
	if cache == nil || cache.Stats().Cap == 0 {
		return nil, api.ErrNoVoiceCache
	}
	return cache, nil
}

// primePrompt is a prime's prompt in refs' voice and the key its voice
// prefix is cached under (the same as any take's in that voice: the key
// does not depend on the text after the prefix). The backend keeps a voice
// cache (voiceCache).
func (e *Engine) primePrompt(refs []api.Reference) (drama3.Prompt, drama3.PrefixKey, error) {
	rows, err := e.prompt.ReferenceVoice(primeScript, drama3Refs(refs), e.cfg.Takes.CodebookEntries())
	if err != nil {
		return drama3.Prompt{}, drama3.PrefixKey{}, fmt.Errorf("%w: %w", api.ErrInvalidRequest, err)
	}
	key, ok := e.cfg.Takes.(drama3.TakePrefixCacher).PrefixKeyOf(rows)
	if !ok {
		return drama3.Prompt{}, drama3.PrefixKey{}, fmt.Errorf("%w: the references leave no voice prefix to keep", api.ErrInvalidRequest)
	}
	return rows, key, nil
}

// notKept is PrimeVoice's error for a voice whose state the cache did not
// keep: larger than its cap when the cache's refusals (st, after the prime)
// passed refused (before it), else memory was short for it.
func notKept(st drama3.PrefixCacheStats, refused int64) error {
	if st.Refusals > refused {
		state, cache := sizes(st.RefusedBytes, st.Cap)
		return fmt.Errorf("%w: it takes %s, more than the voice cache's %s", api.ErrVoiceNotKept, state, cache)
	}
	held, cache := sizes(st.Bytes, st.Cap)
	return fmt.Errorf("%w: memory was short for it (the voice cache holds %s of its %s)", api.ErrVoiceNotKept, held, cache)
}

// sizes prints a and b in MiB, or in bytes where MiB would not tell them
// apart.
func sizes(a, b int64) (string, string) {
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	if mib(a) == mib(b) && a != b {
		return fmt.Sprintf("%d bytes", a), fmt.Sprintf("%d bytes", b)
	}
	return mib(a), mib(b)
}
