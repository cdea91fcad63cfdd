package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixture writes a small kernels/ tree (a macro-made instance family beside
// a lone kernel, a struct-taking kernel, a frame_control.cuh) under a
// temporary repository root and returns the root.
func fixture(t *testing.T, gemv string) string {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++: the generator preprocesses with it")
	}
	root := t.TempDir()
	files := map[string]string{
		"kernels/common.cuh": "#pragma once\n#include <stdint.h>\n#define FULL_MASK 0xffffffffu\n",
		"kernels/gemv.cu":    gemv,
		"kernels/wide.cu": `#include "common.cuh"
extern "C" __global__ void wide(float* a, float* b, float* c, float* d, float* e, float* f, float* g, float* h,
    int i, int j, int k, int l, int m, int n, float eps) {}
`,
		"kernels/frame_control.cuh": `#pragma once
#include <stdint.h>
#define FRAME_MAX_CODEBOOKS 4
#define FRAME_ERR_X (1 << 30)
struct FrameControl {
    uint32_t seed_lo, seed_hi;
    float top_p;
    int32_t codes[FRAME_MAX_CODEBOOKS];
    int32_t error;
};
`,
		"kernels/pol.cu": `#include "common.cuh"
#define POLICY_KERNEL(NAME, PARAMS) \\
    extern "C" __global__ void NAME PARAMS {} \\
    extern "C" __global__ void NAME##_fast PARAMS {}
POLICY_KERNEL(norm_rows, (float* y, int p, float eps))
`,
		"engine/cuda/kernel/kernel.go": "package kernel\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const gemvSource = `#include "common.cuh"
#define GEMV_THREADS 256
#define GEMV_HALF (GEMV_THREADS / 2)
#define GEMV(NAME, T)                                                                          \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(float* __restrict__ y,  \
        const uint16_t* __restrict__ W, long long mstride, int rows) {}
GEMV(gemv_bf16_t32, 32)
GEMV(gemv_bf16_t64, 64)
// A lone kernel whose name the source spells out.
extern "C" __global__ void gemv_bf16(float* y, unsigned long long seed, double theta) {}
`

func TestGenerate(t *testing.T) {
	root := fixture(t, gemvSource)
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	gemv := string(files["engine/cuda/kernel/gemv.go"])
	for _, want := range []string{
		"GemvThreads = 256", "GemvHalf    = 128",
		`GemvBF16T32 GemvBF16TKernel = "gemv_bf16_t32"`, // the group's Go name is the names' common prefix: gemv_bf16 is taken
		"func GemvBF16T(q Launcher, k GemvBF16TKernel, grid [3]int, block int, y, w Ptr, mstride int64, rows int) error",
		"func GemvBF16(q Launcher, grid [3]int, block int, y Ptr, seed uint64, theta float64) error",
		"uint64(uint32(int32(rows)))", "math.Float64bits(theta)",
	} {
		if !strings.Contains(gemv, want) {
			t.Errorf("gemv.go lacks %q:\n%s", want, gemv)
		}
	}
	pol := string(files["engine/cuda/kernel/pol.go"])
	for _, want := range []string{
		"func NormRows(q Launcher, policy Policy, grid [3]int, block int, y Ptr, p int, eps float32) error",
		`name := "norm_rows"`, `name = "norm_rows_fast"`,
	} {
		if !strings.Contains(pol, want) {
			t.Errorf("a policy family: pol.go lacks %q:\n%s", want, pol)
		}
	}
	wide := string(files["engine/cuda/kernel/wide.go"])
	if !strings.Contains(wide, "type WideArgs struct") || !strings.Contains(wide, "func Wide(q Launcher, grid [3]int, block int, a WideArgs) error") {
		t.Errorf("a 15-parameter kernel takes a struct:\n%s", wide)
	}
	if !strings.Contains(string(files["engine/cuda/kernel/common_cuh.go"]), "FullMask = 4294967295") {
		t.Errorf("header defines:\n%s", files["engine/cuda/kernel/common_cuh.go"])
	}
	if e := string(files["engine/cuda/kernel/entries.go"]); !strings.Contains(e, `"gemv": {"gemv_bf16_t32", "gemv_bf16_t64", "gemv_bf16"}`) {
		t.Errorf("entries:\n%s", e)
	}
	fc := string(files["engine/cuda/frame_control.go"])
	for _, want := range []string{"fcSeedLo       = 0", "fcSeedHi       = 1", "fcTopP         = 2", "fcCodes        = 3",
		"fcError        = 7", "frameCtrlWords = 8", "frameMaxCodebooks = 4", "frameErrX         = 1073741824"} {
		if !strings.Contains(fc, want) {
			t.Errorf("frame_control.go lacks %q:\n%s", want, fc)
		}
	}
}

// TestCheck: -check passes on files just written and fails, naming the
// file, when a kernel's signature changed since.
func TestCheck(t *testing.T) {
	root := fixture(t, gemvSource)
	if err := run(root, false); err != nil {
		t.Fatal(err)
	}
	if err := run(root, true); err != nil {
		t.Fatalf("fresh files reported stale: %v", err)
	}
	changed := strings.Replace(gemvSource, "int rows", "long long rows", 1)
	if err := os.WriteFile(filepath.Join(root, "kernels/gemv.cu"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(root, true)
	if err == nil || !strings.Contains(err.Error(), "engine/cuda/kernel/gemv.go") {
		t.Fatalf("a changed signature passed the check: %v", err)
	}
	// A family removed leaves its generated file stale too.
	if err := run(root, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "kernels/wide.cu")); err != nil {
		t.Fatal(err)
	}
	if err := run(root, true); err == nil || !strings.Contains(err.Error(), "wide.go (its source is gone)") {
		t.Fatalf("a removed family passed the check: %v", err)
	}
}

func TestUnsupportedParameter(t *testing.T) {
	root := fixture(t, `#include "common.cuh"
struct S { int a; };
extern "C" __global__ void by_value(S s) {}
`)
	_, err := generate(root)
	if err == nil || !strings.Contains(err.Error(), `parameter type "S" has no Go binding`) {
		t.Fatalf("a struct by value: %v", err)
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"gemv_bf16d_t32r1u8": "GemvBF16dT32r1u8", "rmsnorm_zc_f32": "RMSNormZCF32", "FRAME_ERR_KV_FULL": "FrameErrKVFull",
		"moe_route": "MoERoute", "end_index": "EndIndex",
	} {
		if got := exported(in); got != want {
			t.Errorf("exported(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"end_index": "endIndex", "M": "m", "FRAME_MAX_CODEBOOKS": "frameMaxCodebooks", "bf16_x": "bf16X"} {
		if got := unexported(in); got != want {
			t.Errorf("unexported(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEvalInteger(t *testing.T) {
	for in, want := range map[string]int64{"(1 << 30)": 1 << 30, "0xffffffffu": 0xffffffff, "(64 / 8)": 8, "16ULL": 16} {
		if got, ok := evalInteger(in); !ok || got != want {
			t.Errorf("evalInteger(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"1.5f", "x", ""} {
		if _, ok := evalInteger(in); ok {
			t.Errorf("evalInteger(%q) accepted", in)
		}
	}
}
