//go:build cuda

package kernels

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Every kernel is launched with programmatic dependent launch (engine/cuda
// device.Queue.Launch): it may start while the kernels before it in the
// stream still run, and its griddepcontrol.wait (common.cuh pdl_entry;
// ACQBULK in sm_90 SASS) is what orders it after them. A read of their
// output issued before that wait sees whatever was there before.
//
// The source cannot promise the order by itself: ptxas takes an
// ld.global.nc (what __ldg and reads through const __restrict__ pointers
// compile to) to read memory that no one writes while the kernel runs, and
// may schedule it above griddepcontrol.wait, which PDL makes false. That is
// how moe_combine_norm_fast, once bounded to 1024 threads, came to load a
// routing weight before its wait: the one-row step's combine then read the
// previous layer's weight while moe_gate_up was still writing this one's
// (the fast step left the CPU by 0.5, step27c). So the compiled code is
// checked: no global memory access before the first wait, in any kernel of
// any module, but the reviewed exceptions below.
//
// preWaitReviewed are the kernels that read, before their wait, only what
// no kernel of the stream writes, and how many accesses that compiles to
// (more fail: something else moved above the wait): the B-row step's slots
// (the host copies them before the step, Backbone.StepRows) and the
// gathered GEMVs' ids when the host wrote them (IdsReady; the instance
// waits first otherwise, a branch this scan by address does not follow),
// with the expert table's words (rewritten only between frames, by copies
// on the stream); and, in any number (weights), the GEMVs' first weights
// when the caller says no kernel writes them (Gemv.WeightsAhead, the B-row
// gemvxa_* of GemvRows.WeightsAhead, the tower's fused gate·up and its one-row
// head with W_h, tower_gemv2_*b1: gemv.cuh
// load_ahead, a 16-byte load that skips L1 and is not .nc, the only such
// loads in those kernels). And the loads ahead of docs/PERF.md "ahead25":
// kernels launched only behind a kernel that lets them start after its own
// wait (common.cuh pdl_entry_waited), so that what the kernels before that
// one wrote is theirs to read before their own wait — the DeltaNet step's
// state, conv window and weights behind the input projections, by cp.async
// (the cluster step) or plain loads (the split step's columns), and the B-row
// down projections' ids, expert table words, weights and scales behind the
// gate·up by ids (moe_down2_mma_ahead_fast, whose routed blocks branch past
// the first wait, where this scan by address stops); the step's one-launch
// attention behind its waited q/k/v projection (attn_decode_ahead_fast: the
// row's cached keys and values, its slot and position, docs/PERF.md
// "dec28").
var preWaitReviewed = []struct {
	name    *regexp.Regexp
	max     int
	why     string
	weights *regexp.Regexp // accesses not counted in max (nil: none)
}{
	{regexp.MustCompile(`^(attn_(prep|scores|partial|combine)|deltanet_step_(cols|norm|cluster))_slots(_fast)?$`), 1, "slots (host-copied)", nil},
	{regexp.MustCompile(`^gemv_bf16d?_t\d+r\d+u\d+$`), 2, "host-written ids (IdsReady) and an expert's table word", gemvAheadLoad},
	{regexp.MustCompile(`^gemv_fp8d?_t\d+r\d+u\d+$`), 3, "host-written ids (IdsReady) and an expert's two table words", gemvAheadLoad},
	{regexp.MustCompile(`^tower_gate_up_swiglu$`), 0, "nothing but its weights", gemvAheadLoad},
	{regexp.MustCompile(`^tower_gemv2_t\d+r\d+u\d+b1$`), 0, "nothing but its weights (the codebook head's and W_h's)", gemvAheadLoad},
	{regexp.MustCompile(`^gemvxa_bf16_t\d+r\d+u\d+b\d+$`), 0, "nothing but its weights", gemvAheadLoad},
	{regexp.MustCompile(`^deltanet_step_cluster(_slots)?_ahead_fast$`), 1, "slots (host-copied); the state, window and weights behind a waited input projection", cpAsyncCopy},
	{regexp.MustCompile(`^deltanet_step_cols_slots_ahead_fast$`), 1, "slots (host-copied); the state behind a waited input projection", plainLoad},
	{regexp.MustCompile(`^attn_decode_ahead_fast$`), 2, "the row's slot (host-copied) and position (advanced by the step before); the cached keys and values behind a waited q/k/v projection", cacheLoad},
}

// cpAsyncCopy is a cp.async copy's SASS; plainLoad a load that is neither
// .nc nor 16 bytes wide (the split step's state, one float a load); each
// after an optional predicate.
var cpAsyncCopy, plainLoad = regexp.MustCompile(`^(?:@!?P\d +)?LDGSTS\.`), regexp.MustCompile(`^(?:@!?P\d +)?LDG\.E R`)

// cacheLoad is the decode attention's loads of cached rows ahead: keys as
// 16-byte loads into registers, values by cp.async (docs/PERF.md "dec28").
var cacheLoad = regexp.MustCompile(`^(?:@!?P\d +)?(?:LDGSTS\.E\.BYPASS\.128 |LDG\.E\.128 R)`)

// gemvAheadLoad is load_ahead's SASS (kernels/common.cuh).
var gemvAheadLoad = regexp.MustCompile(`^LDG\.E\.NA\.LTC256B\.128 `)

// sassGlobalAccess matches an SASS instruction that reads or writes global
// (or generic) memory: the opcode without its modifiers, after a predicate.
var sassGlobalAccess = regexp.MustCompile(`^(?:@!?U?P[0-9T] +)?(LDG|STG|LD|ST|ATOMG|ATOM|RED|REDG|LDGSTS|UTMALDG|UTMASTG|UTMAPF|UBLKCP|UBLKRED)(?:\.[.\w]*)?\s`)

// sassExit matches an EXIT, predicated or not.
var sassExit = regexp.MustCompile(`^(?:@!?U?P[0-9T] +)?EXIT\b`)

// sassLine is one instruction of cuobjdump -sass: /*0070*/ OPCODE … ;
var sassLine = regexp.MustCompile(`^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;`)

// kernelWait is one kernel's global memory instructions before its first
// ACQBULK (griddepcontrol.wait), whether it has one, and whether an EXIT
// comes before it (a block that may end without waiting: a kernel whose
// blocks all did would end before the kernels it follows, and the next
// kernel's wait would order it after this one only).
type kernelWait struct {
	before []string
	waits  bool
	exits  bool
}

// preWaitAccesses scans sass (cuobjdump -sass output) kernel by kernel, in
// address order.
func preWaitAccesses(sass string) map[string]*kernelWait {
	out := map[string]*kernelWait{}
	var k *kernelWait
	for _, line := range strings.Split(sass, "\n") {
		if i := strings.Index(line, "Function : "); i >= 0 {
			k = &kernelWait{}
			out[strings.TrimSpace(line[i+len("Function : "):])] = k
			continue
		}
		m := sassLine.FindStringSubmatch(line)
		if k == nil || k.waits || m == nil {
			continue
		}
		if ins := m[1]; strings.HasPrefix(ins, "ACQBULK") {
			k.waits = true
		} else if sassExit.MatchString(ins) {
			k.exits = true
		} else if sassGlobalAccess.MatchString(ins + " ") {
			k.before = append(k.before, ins)
		}
	}
	return out
}

func TestPreWaitAccessesParse(t *testing.T) {
	sass := `
		Function : k_ok
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0070*/                   ACQBULK ;
        /*0080*/                   LDG.E.CONSTANT R2, [R2.64] ;
		Function : k_bad
        /*00f0*/              @!P0 LDG.E.CONSTANT R4, [R4.64] ;
        /*0100*/                   LDS R5, [R6] ;
        /*0110*/                   ACQBULK ;
		Function : k_nowait
        /*0010*/                   STG.E [R2.64], R0 ;
		Function : k_exit
        /*0000*/              @P0 EXIT ;
        /*0010*/                   ACQBULK ;
`
	got := preWaitAccesses(sass)
	if k := got["k_ok"]; !k.waits || len(k.before) != 0 {
		t.Errorf("k_ok: %+v", k)
	}
	if k := got["k_bad"]; !k.waits || len(k.before) != 1 {
		t.Errorf("k_bad: %+v", k)
	}
	if k := got["k_nowait"]; k.waits || len(k.before) != 1 {
		t.Errorf("k_nowait: %+v", k)
	}
	if k := got["k_exit"]; !k.waits || !k.exits || k.before != nil || got["k_ok"].exits {
		t.Errorf("k_exit: %+v", k)
	}
}

// TestNoGlobalAccessBeforePDLWait disassembles every module's sm_90 SASS
// (the architecture with PDL), and its sm_90a variant where one was built
// (engine/cuda loads that one on sm_90 devices then), and fails on any
// global memory access a kernel issues before its PDL wait, but the
// reviewed ones. It needs cuobjdump (the CUDA toolkit's, beside the nvcc
// that built the kernels).
func TestNoGlobalAccessBeforePDLWait(t *testing.T) {
	tool, err := exec.LookPath("cuobjdump")
	if err != nil {
		t.Skip("cuobjdump not found (the CUDA toolkit): the kernels' SASS is not checked")
	}
	type variant struct{ name, arch string }
	var vs []variant
	for _, m := range Modules() {
		vs = append(vs, variant{m, "sm_90"})
		if SM90a(m) != nil {
			vs = append(vs, variant{m + "_sm90a", "sm_90a"})
		}
	}
	dir := t.TempDir()
	sass := make([]string, len(vs))
	errs := make([]error, len(vs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, v := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			path := filepath.Join(dir, v.name+".fatbin")
			if err := os.WriteFile(path, read(v.name+".fatbin"), 0o600); err != nil {
				errs[i] = err
				return
			}
			out, err := exec.Command(tool, "-sass", "-arch", v.arch, path).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("%s: cuobjdump: %v\n%s", v.name, err, out)
			}
			sass[i] = string(out)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	kernels := 0
	var unwaited []string
	for i, v := range vs {
		m := v.name
		for name, f := range preWaitAccesses(sass[i]) {
			if !f.waits {
				// A kernel without a wait: the codecs' (launched on a codec
				// stream, without PDL), the launch-cost probe, the synthetic
				// weights' fills of fresh memory.
				unwaited = append(unwaited, m+"."+name)
				continue
			}
			kernels++
			if f.exits {
				t.Errorf("%s.%s: a block may exit before the PDL wait", m, name)
			}
			if len(f.before) == 0 {
				continue
			}
			reviewed := false
			for _, r := range preWaitReviewed {
				if !r.name.MatchString(name) {
					continue
				}
				counted, weights := 0, 0
				for _, a := range f.before {
					if r.weights != nil && r.weights.MatchString(a) {
						weights++
					} else {
						counted++
					}
				}
				if counted <= r.max {
					t.Logf("%s.%s: %d accesses before the PDL wait, reviewed: %s; %d weight loads ahead", m, name, counted, r.why, weights)
					reviewed = true
				}
			}
			if !reviewed {
				t.Errorf("%s.%s: global memory accessed before the PDL wait (griddepcontrol.wait): %q", m, name, f.before)
			}
		}
	}
	if kernels == 0 {
		t.Fatal("no sm_90 SASS found in the embedded fatbins; run make kernels")
	}
	t.Logf("%d kernels with a PDL wait checked; %d without one not: %v", kernels, len(unwaited), unwaited)
}
