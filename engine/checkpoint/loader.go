package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The staged loader streams every tensor of an Index in file-offset order
// through two buffers: a reader goroutine fills one while the caller
// consumes the other. It reads with O_DIRECT where the platform and the
// file system allow it (aligned offsets, lengths and buffers; the page
// cache is bypassed, so a 70 GB checkpoint does not evict everything else)
// and falls back to buffered reads when the open or the first aligned read
// is refused with EINVAL.

// DirectAlign is the alignment of O_DIRECT offsets, lengths and buffers.
const DirectAlign = 4096

// DefaultLoadBuffer is the size of each of the two staging buffers.
const DefaultLoadBuffer = 64 << 20

// Allocator returns a buffer of exactly n bytes. The GPU backend passes one
// that returns pinned host memory; for O_DIRECT the buffer must start on a
// DirectAlign boundary (otherwise the loader reads buffered).
type Allocator func(n int) ([]byte, error)

// AlignedAlloc is the default Allocator: Go memory aligned to DirectAlign.
func AlignedAlloc(n int) ([]byte, error) {
	b := make([]byte, n+DirectAlign)
	skip := int((DirectAlign - uintptr(unsafe.Pointer(&b[0]))%DirectAlign) % DirectAlign)
	return b[skip : skip+n : skip+n], nil
}

// LoadOptions configures Index.Load. The zero value is valid.
type LoadOptions struct {
	// BufferSize is the size of each staging buffer, rounded up to a
	// multiple of DirectAlign (default DefaultLoadBuffer). Tensors larger
	// than a buffer arrive in several chunks.
	BufferSize int
	// Alloc provides the two buffers (default AlignedAlloc).
	Alloc Allocator
	// Buffered disables O_DIRECT.
	Buffered bool
	// Readers is the number of concurrent reads that fill one buffer
	// (default DefaultLoadReaders): one O_DIRECT request at a time leaves
	// most of an NVMe or virtio disk's queue idle.
	Readers int
}

// DefaultLoadReaders is the default LoadOptions.Readers.
const DefaultLoadReaders = 4

// minReadPiece is the smallest piece worth a concurrent read (a variable so
// that tests can exercise the concurrent path on small files).
var minReadPiece int64 = 1 << 20

// LoadResult reports one Load.
type LoadResult struct {
	Bytes         int64         // tensor data bytes delivered
	ReadBytes     int64         // bytes read from the files (headers and alignment slack included)
	Duration      time.Duration // from the first open (buffers allocated) to the last chunk consumed
	DirectFiles   int           // files read with O_DIRECT
	BufferedFiles int           // files read through the page cache
	Fallbacks     int           // files where O_DIRECT was refused (EINVAL) and buffered reads took over
}

// BytesPerSecond is the delivered tensor bytes per second.
func (r LoadResult) BytesPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Duration.Seconds()
}

// ChunkFunc consumes part of a tensor: data holds bytes [off, off+len(data))
// of ti's data. Chunks of one tensor arrive in order, tensors in file-offset
// order; a zero-size tensor arrives once with empty data. data is only
// valid during the call (its buffer is refilled afterwards). An error stops
// the load and is returned by Load.
type ChunkFunc func(ti TensorInfo, off int64, data []byte) error

// loadFile abstracts the file for tests that inject EINVAL.
type loadFile interface {
	io.ReaderAt
	io.Closer
}

// openDirect opens path with O_DIRECT; a nil value means the platform has
// none. Tests replace it to inject refusals.
var openDirect = openDirectFile

func openBuffered(path string) (loadFile, error) { return os.Open(path) }

type chunk struct {
	buf  []byte
	file int   // index into Index.Files
	pos  int64 // file offset of buf[0]
	n    int   // valid bytes
	err  error
	last bool // the file's last chunk
}

// Load streams every tensor's data to fn, file by file in offset order.
func (ix *Index) Load(opts LoadOptions, fn ChunkFunc) (LoadResult, error) {
	var res LoadResult
	size := opts.BufferSize
	if size <= 0 {
		size = DefaultLoadBuffer
	}
	size = (size + DirectAlign - 1) / DirectAlign * DirectAlign
	alloc := opts.Alloc
	if alloc == nil {
		alloc = AlignedAlloc
	}
	free := make(chan []byte, 2)
	for range 2 {
		b, err := alloc(size)
		if err != nil {
			return res, fmt.Errorf("allocating a %d-byte load buffer: %w", size, err)
		}
		if len(b) != size {
			return res, fmt.Errorf("allocator returned %d bytes for %d", len(b), size)
		}
		free <- b
	}
	start := time.Now()
	full := make(chan chunk, 2)
	stop := make(chan struct{})
	stats := make(chan LoadResult, 1)
	go ix.readAll(opts, free, full, stop, stats)

	err := ix.consume(full, free, fn, &res)
	close(stop)
	for range full { // let the reader finish and hand back its stats
	}
	rs := <-stats
	res.ReadBytes, res.DirectFiles, res.BufferedFiles, res.Fallbacks = rs.ReadBytes, rs.DirectFiles, rs.BufferedFiles, rs.Fallbacks
	res.Duration = time.Since(start)
	return res, err
}

// byFile splits the tensors (already in file, offset order) per file.
func (ix *Index) byFile() map[string][]TensorInfo {
	m := map[string][]TensorInfo{}
	for _, t := range ix.tensors {
		m[t.File] = append(m[t.File], t)
	}
	return m
}

// consume maps each chunk onto the tensors it covers.
func (ix *Index) consume(full <-chan chunk, free chan<- []byte, fn ChunkFunc, res *LoadResult) error {
	perFile := ix.byFile()
	var tensors []TensorInfo
	cur := -1
	next := 0 // first tensor of the current file not fully delivered
	for c := range full {
		if c.err != nil {
			return c.err
		}
		if c.file != cur {
			cur, next = c.file, 0
			tensors = perFile[ix.Files[c.file]]
		}
		cs, ce := c.pos, c.pos+int64(c.n)
		for next < len(tensors) {
			t := tensors[next]
			end := t.Offset + t.Size
			if t.Offset > ce {
				break
			}
			lo, hi := max(t.Offset, cs), min(end, ce)
			if hi > lo || t.Size == 0 {
				if err := fn(t, lo-t.Offset, c.buf[lo-cs:hi-cs]); err != nil {
					return err
				}
				res.Bytes += hi - lo
			}
			if end > ce {
				break
			}
			next++
		}
		if c.last && next < len(tensors) {
			t := tensors[next]
			return fmt.Errorf("%s: tensor %s: file ends before its data does (changed since its header was read?)", t.File, t.Name)
		}
		free <- c.buf
	}
	return nil
}

// readAll is the reader goroutine: it fills free buffers file by file.
func (ix *Index) readAll(opts LoadOptions, free <-chan []byte, full chan<- chunk, stop <-chan struct{}, stats chan<- LoadResult) {
	var rs LoadResult
	defer func() { close(full); stats <- rs }()
	perFile := ix.byFile()
	send := func(c chunk) bool {
		select {
		case full <- c:
			return true
		case <-stop:
			return false
		}
	}
	for fi, path := range ix.Files {
		tensors := perFile[path]
		if len(tensors) == 0 {
			continue
		}
		begin := tensors[0].Offset / DirectAlign * DirectAlign
		last := tensors[len(tensors)-1]
		end := last.Offset + last.Size
		f, direct, err := openForLoad(path, !opts.Buffered)
		if err != nil {
			send(chunk{err: err})
			return
		}
		if !opts.Buffered && !direct {
			rs.Fallbacks++
		}
		firstRead := true
		for pos := begin; pos < end; {
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				f.Close()
				return
			}
			if direct && uintptr(unsafe.Pointer(&buf[0]))%DirectAlign != 0 {
				// The caller's allocator gave unaligned memory: O_DIRECT
				// would refuse it, so read this file buffered.
				f.Close()
				if f, err = openBuffered(path); err != nil {
					send(chunk{err: err})
					return
				}
				direct = false
				rs.Fallbacks++
			}
			n, err := readChunkParallel(f, buf, pos, end, opts.Readers)
			if err != nil && direct && firstRead && errors.Is(err, syscall.EINVAL) {
				f.Close()
				if f, err = openBuffered(path); err == nil {
					direct = false
					rs.Fallbacks++
					n, err = readChunkParallel(f, buf, pos, end, opts.Readers)
				}
			}
			firstRead = false
			if err != nil {
				f.Close()
				send(chunk{err: fmt.Errorf("%s: reading at offset %d: %w", path, pos, err)})
				return
			}
			rs.ReadBytes += int64(n)
			done := pos+int64(n) >= end
			if !send(chunk{buf: buf, file: fi, pos: pos, n: n, last: done || n < len(buf)}) {
				f.Close()
				return
			}
			if n < len(buf) { // end of file
				break
			}
			pos += int64(n)
		}
		f.Close()
		if direct {
			rs.DirectFiles++
		} else {
			rs.BufferedFiles++
		}
	}
}

// openForLoad opens path with O_DIRECT when wanted and possible; an EINVAL
// refusal falls back to a buffered open.
func openForLoad(path string, wantDirect bool) (loadFile, bool, error) {
	if wantDirect && openDirect != nil {
		f, err := openDirect(path)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, syscall.EINVAL) {
			return nil, false, err
		}
	}
	f, err := openBuffered(path)
	return f, false, err
}

// readChunkParallel fills buf like readChunk with up to readers concurrent
// reads of aligned pieces (at least minReadPiece bytes each).
func readChunkParallel(f loadFile, buf []byte, pos, end int64, readers int) (int, error) {
	if readers <= 0 {
		readers = DefaultLoadReaders
	}
	want := min(int64(len(buf)), (end-pos+DirectAlign-1)/DirectAlign*DirectAlign)
	piece := max((want/int64(readers)+DirectAlign-1)/DirectAlign*DirectAlign, minReadPiece)
	if readers == 1 || want <= piece {
		return readChunk(f, buf[:want], pos, end)
	}
	type result struct {
		n   int
		err error
	}
	pieces := make([]result, (want+piece-1)/piece)
	var wg sync.WaitGroup
	for i := range pieces {
		r := &pieces[i]
		a := int64(i) * piece
		b := min(a+piece, want)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.n, r.err = readChunk(f, buf[a:b], pos+a, end)
		}()
	}
	wg.Wait()
	total := 0
	for i, r := range pieces {
		if r.err != nil {
			return total, r.err
		}
		total += r.n
		if int64(r.n) < min(piece, want-int64(i)*piece) { // end of file
			break
		}
	}
	return total, nil
}

// readChunk fills buf from pos, reading the whole buffer (an aligned
// length, so O_DIRECT accepts it) unless the data ends first. A short count
// means end of file.
func readChunk(f loadFile, buf []byte, pos, end int64) (int, error) {
	got := 0
	for got < len(buf) {
		n, err := f.ReadAt(buf[got:], pos+int64(got))
		got += n
		if err == io.EOF || n == 0 && err == nil {
			break
		}
		if err != nil {
			return got, err
		}
		if pos+int64(got) >= end {
			break
		}
	}
	return got, nil
}
