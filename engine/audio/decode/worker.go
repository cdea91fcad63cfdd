package decode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// Uploads are decoded in a child process. The C libraries (libmpg123,
// libopusfile, libsoxr) run on the bytes of whoever calls the speech API:
// a memory-safety bug in one of them, in the server's process, would be the
// server's; in a child limited in address space and time it is a refused
// recording. The child is this program's own binary started with
// WorkerCommand, so a program opts in by calling ServeWorkerIfAsked first in
// main (and its tests in TestMain); one that does not decodes in-process,
// within the same budget.

// WorkerCommand is the first argument that makes this program's binary a
// reference decoder: one recording on stdin, the result on stdout.
const WorkerCommand = "decode-reference-worker"

// Limits of a decoder child and of the pool of them.
const (
	// workerAddressSpace bounds the child's virtual memory beyond what it
	// maps at start: the recording and the budget's worst case (31 s of
	// 192 kHz × 8 channels: 190 MB of float32, with mewkiz/flac's blocks,
	// the mono mix and the resampling, 380 MB resident and 470 MB more
	// mapped, measured) with room for the Go heap's reservations.
	workerAddressSpace = 1 << 30
	// workerMaxInput bounds the recording the child reads.
	workerMaxInput = 64 << 20
	// workerSlots is how many recordings are decoded at once, each in its
	// own child; more wait for a slot, up to workerWait.
	workerSlots = 2
	workerWait  = 30 * time.Second
)

// workerTimeout is the wall-clock limit of one child: a 30 s recording
// decodes and resamples in well under a second.
var workerTimeout = 10 * time.Second

var (
	// isolate is set by ServeWorkerIfAsked: this program serves the worker.
	isolate atomic.Bool
	// slots is the bounded pool every reference decode takes a slot of.
	slots = make(chan struct{}, workerSlots)
)

// ErrBusy is returned when every decoding slot stayed busy for workerWait.
var ErrBusy = errors.New("the server is busy decoding other recordings: try again")

// ServeWorkerIfAsked runs the decoder child and exits when this process was
// started as one (os.Args[1] == WorkerCommand); otherwise it records that
// this program can be its own decoder, so ReadReference isolates. Call it
// first in main, before anything else reads stdin or writes stdout.
func ServeWorkerIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == WorkerCommand {
		os.Exit(serveWorker(os.Stdin, os.Stdout))
	}
	isolate.Store(true)
}

// Isolated says whether ReadReference decodes in a child process.
func Isolated() bool { return isolate.Load() }

// workerReply is the child's answer: a JSON line, then (without an error)
// Samples little-endian float32s.
type workerReply struct {
	Error          string `json:"error,omitempty"`
	Kind           string `json:"kind,omitempty"` // the sentinel the error wraps
	Format         Format `json:"format,omitempty"`
	SourceRate     int    `json:"source_rate_hz,omitempty"`
	SourceChannels int    `json:"source_channels,omitempty"`
	Samples        int    `json:"samples,omitempty"`
}

// kinds are the sentinel errors that cross the process boundary, so the
// caller's errors.Is sees what it would in-process.
var kinds = map[string]error{"too_long": ErrTooLong, "too_short": ErrTooShort, "silent": ErrSilent, "limit": ErrLimit}

// serveWorker is the child: limits itself, reads one recording and writes
// the reply. Its exit status is 0 when the reply is written.
func serveWorker(in io.Reader, out io.Writer) int {
	if err := limitAddressSpace(workerAddressSpace); err != nil {
		fmt.Fprintln(os.Stderr, "decode worker:", err)
		return 1
	}
	b, err := io.ReadAll(io.LimitReader(in, workerMaxInput+1))
	if err == nil && len(b) > workerMaxInput {
		err = fmt.Errorf("the recording is more than %d bytes", workerMaxInput)
	}
	var reply workerReply
	var ref *Reference
	if err == nil {
		ref, err = readReferenceInProcess(b)
	}
	if err != nil {
		reply.Error = err.Error()
		for k, sentinel := range kinds {
			if errors.Is(err, sentinel) {
				reply.Kind = k
			}
		}
	} else {
		reply = workerReply{Format: ref.Format, SourceRate: ref.SourceRate, SourceChannels: ref.SourceChannels, Samples: len(ref.Samples)}
	}
	w := bufio.NewWriter(out)
	head, _ := json.Marshal(reply)
	w.Write(append(head, '\n'))
	if ref != nil {
		var buf [4]byte
		for _, v := range ref.Samples {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
			w.Write(buf[:])
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "decode worker:", err)
		return 1
	}
	return 0
}

// workerError is an error the child reported, wrapping its sentinel.
type workerError struct {
	msg  string
	kind error
}

func (e *workerError) Error() string { return e.msg }
func (e *workerError) Unwrap() error { return e.kind }

// acquireSlot waits for a decoding slot, up to workerWait or ctx's end.
func acquireSlot(ctx context.Context) (release func(), err error) {
	t := time.NewTimer(workerWait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-slots }) }, nil
	case <-t.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readReferenceIsolated is ReadReference in a child process.
func readReferenceIsolated(ctx context.Context, b []byte) (*Reference, error) {
	if len(b) > workerMaxInput {
		return nil, fmt.Errorf("cannot read the reference: the recording is %d bytes, more than %d", len(b), workerMaxInput)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to decode the reference in a child: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, workerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, WorkerCommand)
	cmd.Stdin = bytes.NewReader(b)
	// The reply is at most a header and MaxReferenceSeconds of samples.
	stdout := &limitedBuffer{max: 4<<10 + 4*int(MaxReferenceSeconds*44100+1)}
	cmd.Stdout, cmd.Stderr = stdout, io.Discard
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("cannot read the reference: decoding took longer than %s", workerTimeout)
	}
	if runErr != nil {
		// A crash, the address-space limit, a kill: this recording's
		// problem, said without the child's output (it may echo the file).
		return nil, fmt.Errorf("cannot read the reference: the decoder failed on this file (%v)", runErr)
	}
	head, rest, ok := bytes.Cut(stdout.Bytes(), []byte("\n"))
	var reply workerReply
	if !ok || stdout.overflow || json.Unmarshal(head, &reply) != nil {
		return nil, errors.New("cannot read the reference: the decoder's reply is malformed")
	}
	if reply.Error != "" {
		return nil, &workerError{msg: reply.Error, kind: kinds[reply.Kind]}
	}
	if reply.Samples < 0 || len(rest) != 4*reply.Samples {
		return nil, fmt.Errorf("cannot read the reference: the decoder's reply has %d bytes of samples for %d", len(rest), reply.Samples)
	}
	ref := &Reference{Samples: make([]float32, reply.Samples), Format: reply.Format, SourceRate: reply.SourceRate, SourceChannels: reply.SourceChannels}
	for i := range ref.Samples {
		ref.Samples[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
	}
	return ref, nil
}

// limitedBuffer keeps the first max bytes written to it and notes more.
type limitedBuffer struct {
	bytes.Buffer
	max      int
	overflow bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.Len()
	if len(p) > room {
		b.overflow = true
	}
	b.Buffer.Write(p[:min(len(p), max(room, 0))])
	return len(p), nil
}
