//go:build linux && (amd64 || arm64)

package checkpoint

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkLoad measures Index.Load on a generated checkpoint of
// PROSCENIUM_LOAD_BENCH_MB MiB (default 1024) in a temporary directory
// (TMPDIR, deleted afterwards): O_DIRECT, buffered with the file evicted
// from the page cache before each run (cold), buffered from the page cache
// (warm), each with DefaultLoadReaders and with one read at a time, and dd
// (iflag=direct, and buffered from a cold cache) on the same file as the
// disk reference.
//
//	go test ./engine/checkpoint -run '^$' -bench BenchmarkLoad -benchtime 3x
func BenchmarkLoad(b *testing.B) {
	mb := 1024
	if s := os.Getenv("PROSCENIUM_LOAD_BENCH_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil || mb <= 0 {
			b.Fatalf("PROSCENIUM_LOAD_BENCH_MB=%q", s)
		}
	}
	dir, err := os.MkdirTemp("", "proscenium-loadbench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// 64 MiB tensors of random bytes plus a few odd sizes that straddle buffers.
	rng := rand.New(rand.NewChaCha8([32]byte{7}))
	var ts []*Tensor
	for i, left := 0, mb<<20; left > 0; i++ {
		n := min(left, 64<<20-4*i*1013)
		data := make([]byte, n)
		for j := 0; j+8 <= n; j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				data[j+k] = byte(v >> (8 * k))
			}
		}
		ts = append(ts, &Tensor{Name: fmt.Sprintf("t%03d", i), DType: Bool, Shape: []int{n}, Data: data})
		left -= n
	}
	path := filepath.Join(dir, "model.safetensors")
	if err := WriteSafetensors(path, ts, nil); err != nil {
		b.Fatal(err)
	}
	ts = nil
	ix, err := OpenSafetensors(path)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	evict := func() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		const fadvDontNeed = 4
		if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
			b.Fatalf("fadvise: %v", e)
		}
	}
	run := func(name string, opts LoadOptions, before func()) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(ix.TotalBytes())
			var res LoadResult
			for b.Loop() {
				b.StopTimer()
				if before != nil {
					before()
				}
				b.StartTimer()
				res, err = ix.Load(opts, func(TensorInfo, int64, []byte) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(res.BytesPerSecond()/1e9, "GB/s")
			b.Logf("%s: %+v", name, res)
		})
	}
	run("direct", LoadOptions{}, nil)
	run("direct-1-reader", LoadOptions{Readers: 1}, nil)
	run("buffered-cold", LoadOptions{Buffered: true}, evict)
	run("buffered-cold-1-reader", LoadOptions{Buffered: true, Readers: 1}, evict)
	run("buffered-warm", LoadOptions{Buffered: true}, nil)
	for _, flags := range [][]string{{"iflag=direct"}, {}} {
		evict()
		args := append([]string{"if=" + path, "of=/dev/null", "bs=64M"}, flags...)
		if out, err := exec.Command("dd", args...).CombinedOutput(); err == nil {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			b.Logf("dd %s: %s", strings.Join(args[2:], " "), lines[len(lines)-1])
		}
	}
}
