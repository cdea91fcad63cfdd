//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/cuda/device"
)

// These tests need a GPU: gorgonia.org/cu ends a process without one in its
// package init, so the binary is built here (make cuda-test-bins) and run on a
// GPU machine. Each kernel is compared with its engine/cpu reference on random
// non-zero inputs, with its output poisoned with NaN first.

var dev *Device

func TestMain(m *testing.M) {
	d, err := Open(0, 0, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuda tests:", err)
		os.Exit(1)
	}
	if d.Numerics, err = testNumerics(); err != nil {
		fmt.Fprintln(os.Stderr, "cuda tests:", err)
		os.Exit(1)
	}
	dev = d
	fmt.Printf("device: %s, compute %d.%d, %d SMs, %d MiB L2, %.1f GiB, driver %d, kernels %s\nkernel build: %s\nnumerics: %s\n",
		d.Info.Name, d.Info.Major, d.Info.Minor, d.Info.Multiprocs, d.Info.L2Bytes>>20,
		float64(d.Info.TotalMem)/(1<<30), d.Info.DriverVersion, d.Info.Kernels, d.Info.KernelBuild, d.Numerics)
	code := m.Run()
	d.Close()
	os.Exit(code)
}

const nanBits = 0x7fc00000

// newRand draws a fresh seed for each test (logged), or takes
// PROSCENIUM_TEST_SEED to repeat a run's inputs.
func newRand(t *testing.T) *rand.Rand {
	seed := rand.Uint64()
	if s := os.Getenv("PROSCENIUM_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PROSCENIUM_TEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// randNonZero is n values uniform in ±[0.01, 1).
func randNonZero(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		x := float32(0.01 + 0.99*r.Float64())
		if r.IntN(2) == 0 {
			x = -x
		}
		v[i] = x
	}
	return v
}

func upload[T any](t *testing.T, data []T) *Block {
	t.Helper()
	b := alloc(t, len(data)*int(sizeOf(data)))
	if err := Upload(dev, b, 0, data); err != nil {
		t.Fatal(err)
	}
	return b
}

func sizeOf[T any](s []T) int64 {
	var z T
	switch any(z).(type) {
	case float32, int32, uint32:
		return 4
	case uint16:
		return 2
	case uint8:
		return 1
	}
	panic("sizeOf")
}

func alloc(t *testing.T, bytes int) *Block {
	t.Helper()
	b, err := dev.Alloc(int64(bytes))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Free(b); err != nil {
			t.Error(err)
		}
	})
	return b
}

// runCaptured captures build's launches as one graph, launches it once and
// destroys it: the launches run as a captured step's do, under PDL where the
// device has it.
func runCaptured(t *testing.T, build func(q *Queue) error) {
	t.Helper()
	var graph *Graph
	if err := dev.Run(func(q *Queue) (err error) { graph, err = q.Capture(build); return err }); err != nil {
		t.Fatal(err)
	}
	defer dev.Run(func(q *Queue) error { graph.Destroy(); return nil })
	if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil {
		t.Fatal(err)
	}
}

// poisoned is a float32 output buffer of n elements filled with NaN.
func poisoned(t *testing.T, n int) *Block {
	t.Helper()
	b := alloc(t, n*4)
	if err := dev.Fill32(b, nanBits); err != nil {
		t.Fatal(err)
	}
	return b
}

func download(t *testing.T, b *Block, n int) []float32 {
	t.Helper()
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, n)
	if err := Download(dev, out, b, 0); err != nil {
		t.Fatal(err)
	}
	return out
}

// finiteRelErr fails unless every element is finite (so written) and
// returns ‖got − ref‖/‖ref‖.
func finiteRelErr(t *testing.T, what string, got, ref []float32) float64 {
	t.Helper()
	var num, den float64
	for i := range ref {
		g := float64(got[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			t.Fatalf("%s: element %d is %v (unwritten or overflowed); reference %v", what, i, got[i], ref[i])
		}
		d := g - float64(ref[i])
		num += d * d
		den += float64(ref[i]) * float64(ref[i])
	}
	return math.Sqrt(num / den)
}

// checkClose fails unless every element is finite and ‖got − ref‖/‖ref‖ ≤
// tol; it logs the relative error.
func checkClose(t *testing.T, what string, got, ref []float32, tol float64) {
	t.Helper()
	rel := finiteRelErr(t, what, got, ref)
	t.Logf("%s: relative error %.3g (%d elements)", what, rel, len(ref))
	if !(rel <= tol) {
		t.Fatalf("%s: relative error %.3g > %.3g", what, rel, tol)
	}
}

func bf16s(v []float32) []uint16 {
	h := make([]uint16, len(v))
	for i, x := range v {
		h[i] = checkpoint.F32ToBF16(x)
	}
	return h
}

func bf16ToF32(h []uint16) []float32 {
	f := make([]float32, len(h))
	for i, x := range h {
		f[i] = checkpoint.BF16ToF32(x)
	}
	return f
}

func TestEmbedGather(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct{ vocab, width, n int }{{1000, 2048, 7}, {33, 96, 5}, {5, 1, 3}} {
		t.Run(fmt.Sprintf("vocab%d_width%d", c.vocab, c.width), func(t *testing.T) {
			table := bf16s(randNonZero(r, c.vocab*c.width))
			ids := make([]int32, c.n)
			idsInt := make([]int, c.n)
			for i := range ids {
				ids[i] = int32(r.IntN(c.vocab))
				idsInt[i] = int(ids[i])
			}
			out := poisoned(t, c.n*c.width)
			in1 := upload(t, table)
			in2 := upload(t, ids)
			if err := dev.Run(func(q *Queue) error { return q.EmbedGather(out, in1, in2, c.n, c.vocab, c.width) }); err != nil {
				t.Fatal(err)
			}
			ref := make([]float32, c.n*c.width)
			cpu.GatherRows(ref, bf16ToF32(table), idsInt, c.width)
			checkClose(t, "gather", download(t, out, len(ref)), ref, 0)
		})
	}
	t.Run("id out of range writes NaN", func(t *testing.T) {
		table := bf16s(randNonZero(r, 4*8))
		out := alloc(t, 2*8*4)
		if err := dev.Fill32(out, 0); err != nil {
			t.Fatal(err)
		}
		in1 := upload(t, table)
		in2 := upload(t, []int32{1, 4})
		if err := dev.Run(func(q *Queue) error { return q.EmbedGather(out, in1, in2, 2, 4, 8) }); err != nil {
			t.Fatal(err)
		}
		got := download(t, out, 16)
		for i, v := range got {
			if (i >= 8) != math.IsNaN(float64(v)) {
				t.Fatalf("element %d = %v", i, v)
			}
		}
	})
}

func TestRMSNormZeroCentred(t *testing.T) { eachNumerics(t, testRMSNormZeroCentred) }

func testRMSNormZeroCentred(t *testing.T) {
	r := newRand(t)
	// scale shrinks x: at 1e-3 the mean square (~3e-7) is below eps (1e-6),
	// so a kernel that dropped or misplaced eps would be far off.
	for _, c := range []struct {
		n, width int
		scale    float32
	}{{3, 2048, 1}, {2, 100, 1}, {4, 1, 1}, {1, 5000, 1}, {3, 2048, 1e-3}} {
		t.Run(fmt.Sprintf("%dx%d_scale%g", c.n, c.width, c.scale), func(t *testing.T) {
			x, w := randNonZero(r, c.n*c.width), randNonZero(r, c.width)
			for i := range x {
				x[i] *= c.scale
			}
			const eps = 1e-6
			out := poisoned(t, len(x))
			in1 := upload(t, x)
			in2 := upload(t, w)
			if err := dev.Run(func(q *Queue) error { return q.RMSNormZC(out, in1, in2, c.n, c.width, eps) }); err != nil {
				t.Fatal(err)
			}
			ref := make([]float32, len(x))
			for i := 0; i < c.n; i++ {
				cpu.RMSNormZeroCentred(ref[i*c.width:(i+1)*c.width], x[i*c.width:(i+1)*c.width], w, eps)
			}
			got := download(t, out, len(ref))
			checkClose(t, "rmsnorm", got, ref, 1e-6)
			checkBitsIfExact(t, "rmsnorm", got, ref)
		})
	}
}

func TestSwiGLUAndAdd(t *testing.T) {
	r := newRand(t)
	for _, n := range []int{1, 1000, 3 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			gate, up := randNonZero(r, n), randNonZero(r, n)
			for i := range gate {
				gate[i] *= 8 // cover the sigmoid's tails
			}
			out := poisoned(t, n)
			in1 := upload(t, gate)
			in2 := upload(t, up)
			if err := dev.Run(func(q *Queue) error { return q.SwiGLU(out, in1, in2, n) }); err != nil {
				t.Fatal(err)
			}
			ref := make([]float32, n)
			cpu.SwiGLU(ref, gate, up)
			got := download(t, out, n)
			checkClose(t, "swiglu", got, ref, 1e-6)
			checkCPUBits(t, "swiglu", got, ref)

			dst, x := randNonZero(r, n), randNonZero(r, n)
			db := upload(t, dst)
			xb := upload(t, x)
			if err := dev.Run(func(q *Queue) error { return q.Add(db, xb, n) }); err != nil {
				t.Fatal(err)
			}
			cpu.Add(dst, x)
			checkClose(t, "add", download(t, db, n), dst, 0)
		})
	}
}

// gemvCase is one projection shape: n matrices of mats applied, each
// [rows, cols]; xstride 0 shares one input.
type gemvCase struct {
	name                         string
	rows, cols, n, mats, xstride int
}

var gemvCases = []gemvCase{
	{"dense 2048→8192", 8192, 2048, 1, 1, 0},
	{"dense 4096→2048", 2048, 4096, 1, 1, 0},
	{"experts 8×2048→512", 512, 2048, 8, 20, 0},
	{"experts 8×512→2048", 2048, 512, 8, 20, 512},
	{"ragged 200×272", 200, 272, 3, 5, 272},
	{"tiny 3×16", 3, 16, 1, 1, 0},
}

// distinctIDs is n different ids below mats, in random order.
func distinctIDs(r *rand.Rand, n, mats int) []int32 {
	p := r.Perm(mats)[:n]
	ids := make([]int32, n)
	for i, v := range p {
		ids[i] = int32(v)
	}
	return ids
}

// gemvRuns is each variant of list four times: with the ids read after and
// before the wait for the previous kernel (IdsReady), with float32 sums (the
// tower's instances) and float64 ones (the backbone's, Gemv.F64).
type gemvRun struct {
	v             GemvVariant
	idsReady, f64 bool
}

func gemvRuns(list []GemvVariant) []gemvRun {
	var runs []gemvRun
	for _, v := range list {
		for _, f64 := range []bool{false, true} {
			runs = append(runs, gemvRun{v, false, f64}, gemvRun{v, true, f64})
		}
	}
	return runs
}

func (g gemvRun) name() string {
	n := g.v.Name()
	if g.f64 {
		n = "f64_" + n
	}
	if g.idsReady {
		return n + "_idsready"
	}
	return n
}

// check compares a run's output with the CPU's: float32 sums within 1e-5,
// float64 sums bit for bit (checkProjBits).
func (g gemvRun) check(t *testing.T, what string, got, ref []float32) {
	t.Helper()
	checkClose(t, what, got, ref, 1e-5)
	if g.f64 {
		checkProjBits(t, what, got, ref)
	}
}

func (c gemvCase) gemv(ids *Block, run gemvRun) Gemv {
	g := Gemv{Rows: c.rows, Cols: c.cols, N: c.n, Mats: c.mats, XStride: c.xstride, Variant: run.v, IdsReady: run.idsReady,
		F64: run.f64}
	if c.mats > 1 {
		g.Ids = ids
	}
	return g
}

func (c gemvCase) inputs(r *rand.Rand) (x []float32, ids []int32) {
	nx := c.cols
	if c.xstride > 0 {
		nx = (c.n-1)*c.xstride + c.cols
	}
	return randNonZero(r, nx), distinctIDs(r, c.n, c.mats)
}

// reference applies cpu.MatVec with the float32 weights of each chosen matrix.
func (c gemvCase) reference(w func(m int) []float32, x []float32, ids []int32) []float32 {
	ref := make([]float32, c.n*c.rows)
	for e := 0; e < c.n; e++ {
		xe := x[e*c.xstride : e*c.xstride+c.cols]
		cpu.MatVec(ref[e*c.rows:(e+1)*c.rows], w(int(ids[e])), xe, c.rows, c.cols)
	}
	return ref
}

func TestGemvBF16(t *testing.T) {
	r := newRand(t)
	for _, c := range gemvCases {
		per := c.rows * c.cols
		wh := bf16s(randNonZero(r, c.mats*per))
		wf := bf16ToF32(wh)
		W := upload(t, wh)
		for _, v := range gemvRuns(GemvBF16Variants) {
			if v.idsReady && c.mats == 1 {
				continue // no ids
			}
			t.Run(c.name+"/"+v.name(), func(t *testing.T) {
				x, ids := c.inputs(r)
				y := poisoned(t, c.n*c.rows)
				in1 := upload(t, ids)
				in2 := upload(t, x)
				if err := dev.Run(func(q *Queue) error { return q.GemvBF16(c.gemv(in1, v), y, W, in2) }); err != nil {
					t.Fatal(err)
				}
				ref := c.reference(func(m int) []float32 { return wf[m*per : (m+1)*per] }, x, ids)
				v.check(t, "gemv bf16", download(t, y, len(ref)), ref)
			})
		}
	}
}

// randFP8 is n random finite E4M3 codes (0x7f and 0xff are NaN).
func randFP8(r *rand.Rand, n int) []uint8 {
	b := make([]uint8, n)
	for i := range b {
		v := uint8(r.UintN(256))
		for v&0x7f == 0x7f || v&0x7f == 0 {
			v = uint8(r.UintN(256))
		}
		b[i] = v
	}
	return b
}

func TestGemvFP8(t *testing.T) {
	r := newRand(t)
	for _, c := range gemvCases {
		per, ns := c.rows*c.cols, FP8ScaleCount(c.rows, c.cols)
		wq := randFP8(r, c.mats*per)
		scales := make([]float32, c.mats*ns)
		for i := range scales {
			scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
		}
		W, S := upload(t, wq), upload(t, scales)
		deq := func(m int) []float32 {
			return checkpoint.DequantFP8Blocks(wq[m*per:(m+1)*per], c.rows, c.cols, scales[m*ns:(m+1)*ns], FP8Block)
		}
		for _, v := range gemvRuns(GemvFP8Variants) {
			if v.idsReady && c.mats == 1 {
				continue // no ids
			}
			t.Run(c.name+"/"+v.name(), func(t *testing.T) {
				x, ids := c.inputs(r)
				y := poisoned(t, c.n*c.rows)
				in1 := upload(t, ids)
				in2 := upload(t, x)
				if err := dev.Run(func(q *Queue) error { return q.GemvFP8(c.gemv(in1, v), y, W, S, in2) }); err != nil {
					t.Fatal(err)
				}
				ref := c.reference(deq, x, ids)
				v.check(t, "gemv fp8", download(t, y, len(ref)), ref)
			})
		}
	}
}

func TestPoolOnDevice(t *testing.T) {
	p := device.NewPool(device.CUDADriver{}, 64<<20, 8<<20)
	var blocks []*Block
	err := dev.Do(func() error {
		for i := 0; i < 4; i++ {
			b, err := p.Alloc(DeviceMem, 16<<20)
			if err != nil {
				return err
			}
			blocks = append(blocks, b)
		}
		if _, err := p.Alloc(DeviceMem, 1); err == nil {
			return fmt.Errorf("allocation past the cap succeeded")
		}
		h, err := p.Alloc(PinnedMem, 8<<20)
		if err != nil {
			return err
		}
		blocks = append(blocks, h)
		if s := p.Stats(DeviceMem); s.Used != 64<<20 || s.Peak != 64<<20 {
			return fmt.Errorf("device stats %+v", s)
		}
		for _, b := range blocks {
			if err := b.Free(); err != nil {
				return err
			}
		}
		free, total, err := device.CUDADriver{}.MemInfo()
		if err != nil {
			return err
		}
		if err := p.Admit(total); err == nil {
			return fmt.Errorf("admitted the whole device (%d bytes, %d free)", total, free)
		}
		return p.Admit(64 << 20)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDependentChain runs a chain of launches where each reads what the one
// before wrote (projection → residual add → norm, ten times) without
// synchronising, as a decode step will: with programmatic dependent launch on
// (the default on sm_90), every kernel must still wait for its inputs.
func TestDependentChain(t *testing.T) {
	r := newRand(t)
	const n, steps = 1024, 10
	wh := bf16s(randNonZero(r, n*n))
	for i := range wh { // keep the chain's magnitudes near 1
		wh[i] = checkpoint.F32ToBF16(checkpoint.BF16ToF32(wh[i]) / 32)
	}
	x, b, g := randNonZero(r, n), randNonZero(r, n), randNonZero(r, n)
	W, xb, bb, gb := upload(t, wh), upload(t, x), upload(t, b), upload(t, g)
	y := poisoned(t, n)
	t.Logf("programmatic dependent launch: %v", dev.Info.PDL)
	err := dev.Run(func(q *Queue) error {
		for s := 0; s < steps; s++ {
			gv := Gemv{Rows: n, Cols: n, N: 1, Mats: 1, Variant: ChooseGemv(false, n, n, 1)}
			if err := firstErr(q.GemvBF16(gv, y, W, xb), q.Add(y, bb, n), q.RMSNormZC(xb, y, gb, 1, n, 1e-6)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wf := bf16ToF32(wh)
	ref := append([]float32(nil), x...)
	tmp := make([]float32, n)
	for s := 0; s < steps; s++ {
		cpu.MatVec(tmp, wf, ref, n, n)
		cpu.Add(tmp, b)
		cpu.RMSNormZeroCentred(ref, tmp, g, 1e-6)
	}
	checkClose(t, "chain", download(t, xb, n), ref, 1e-4)
}
