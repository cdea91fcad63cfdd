package decode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"proscenium/engine/audio/decode/decodetest"
)

// TestMain makes the test binary its own decoder child, as the programs'
// mains do. With DECODE_TEST_CRASH set, the child dies of SIGSEGV instead:
// a C decoder's memory bug.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WorkerCommand && os.Getenv("DECODE_TEST_CRASH") != "" {
		syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Minute)
	}
	ServeWorkerIfAsked()
	os.Exit(m.Run())
}

// TestIsolatedMatchesInProcess: the child's reference is the in-process
// one, sample for sample, in every format.
func TestIsolatedMatchesInProcess(t *testing.T) {
	if !Isolated() {
		t.Fatal("TestMain did not make the binary its own decoder")
	}
	for _, name := range []string{"ref.wav", "ref.flac", "ref.mp3", "ref.opus"} {
		b := readTestdata(t, name)
		want, err := readReferenceInProcess(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadReference(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Format != want.Format || got.SourceRate != want.SourceRate || got.SourceChannels != want.SourceChannels || len(got.Samples) != len(want.Samples) {
			t.Fatalf("%s: %+v, want %+v", name, got, want)
		}
		for i := range want.Samples {
			if got.Samples[i] != want.Samples[i] {
				t.Fatalf("%s: sample %d: %g, want %g", name, i, got.Samples[i], want.Samples[i])
			}
		}
	}
	// The sentinels cross the boundary.
	if _, err := ReadReference(readTestdata(t, "ref.wav")[:2000]); !errors.Is(err, ErrTooShort) {
		t.Errorf("a short recording: %v, want ErrTooShort", err)
	}
}

// rssBytes is this process's resident set (Linux), 0 elsewhere.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, rss int64
	if _, err := fmt.Sscan(string(b), &size, &rss); err != nil {
		t.Fatal(err)
	}
	return rss * int64(os.Getpagesize())
}

// TestIsolatedBombs: the issue-32 bombs (12.6 KB and 20 KB at 655350 Hz × 8
// channels, and a 20 KB one at 48 kHz stereo declaring 2^36−1 frames that
// expands past the budget; TestFLACBombBudget has one at the limits, which
// the race detector makes too slow for the child's 10 s),
// one at a time and three at once, are refused with the sentinel the
// caller maps to a 400, and the server's process does not grow.
func TestIsolatedBombs(t *testing.T) {
	bombs := [][]byte{
		decodetest.FLACBomb(655350, 8, 0, 12600),
		decodetest.FLACBomb(655350, 8, 0, 20<<10),
		decodetest.FLACBomb(48000, 2, 1<<36-1, 20<<10),
	}
	want := []error{ErrLimit, ErrLimit, ErrTooLong}
	runtime.GC()
	before := rssBytes(t)
	for i, b := range bombs {
		if _, err := ReadReference(b); !errors.Is(err, want[i]) {
			t.Errorf("bomb %d: %v, want %v", i, err, want[i])
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { _, errs[i] = ReadReference(bombs[i%2]) })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrLimit) {
			t.Errorf("at once, bomb %d: %v", i, err)
		}
	}
	if grew := rssBytes(t) - before; grew > 100<<20 {
		t.Errorf("the process grew by %d MB", grew>>20)
	}
}

// TestIsolatedChildFailures: a child that crashes or runs past its time is
// this recording's error; the caller goes on.
func TestIsolatedChildFailures(t *testing.T) {
	b := readTestdata(t, "ref.mp3")
	t.Setenv("DECODE_TEST_CRASH", "1")
	if _, err := ReadReference(b); err == nil || !strings.Contains(err.Error(), "the decoder failed on this file") {
		t.Errorf("crashing child: %v", err)
	}
	os.Unsetenv("DECODE_TEST_CRASH")
	defer func(d time.Duration) { workerTimeout = d }(workerTimeout)
	workerTimeout = time.Millisecond
	if _, err := ReadReference(b); err == nil || !strings.Contains(err.Error(), "took longer than") {
		t.Errorf("slow child: %v", err)
	}
	workerTimeout = 10 * time.Second
	if _, err := ReadReference(b); err != nil {
		t.Errorf("after both: %v", err)
	}
}

// TestSlotsBounded: with every slot taken, a decode waits for one and
// gives up with ctx.
func TestSlotsBounded(t *testing.T) {
	var releases []func()
	for range workerSlots {
		r, err := acquireSlot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := ReadReferenceContext(ctx, readTestdata(t, "ref.wav")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with no slot free: %v", err)
	}
	for _, r := range releases {
		r()
	}
}
