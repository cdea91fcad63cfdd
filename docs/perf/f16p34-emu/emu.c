// f16p34's host emulation (docs/PERF.md "f16p34"): the per-lane arithmetic
// of kernels/gemm.cu's GEMM_PARTS_F16 path against the CPU's reference
// (engine/cpu: w = float32(q·s), Σ float64(w)·float64(x), rounded once).
//
//   cc -O2 -o /tmp/f16emu emu.c -lm && /tmp/f16emu
//
// What it restates: (1) E4M3 → FP16 for every code, both ways the kernel
// has (sm_89+'s cvt is exact by PTX's definition; the sm_80/86 bit route:
// s.eeee.mmm → FP16 bits s.0eeee.mmm0000000, × 2^8 in f16 arithmetic)
// against the E4M3 value; (2) f16_row_scale and split_f16: per X row and
// stage of BK columns, y = x·s (float32), m = max |y|, f = min(141 − E(m),
// 126), hi = f16(y·2^f), lo = f16(y·2^f − hi); (3) the MMAs' products
// hi·q, lo·q exact (float64 here), summed in float32 per stage (the tensor
// core's order differs: its float32 sums are not emulated bit for bit),
// the stage's sum × 2^-f added into the pass's float32 accumulator by one
// fma. Outputs against the reference: the worst |got − ref| / Σ|w·x| of a
// row (the error against the dot product's own scale) and the tests'
// ‖got − ref‖/‖ref‖ over a matrix, for random rows and adversarial ones:
// 1e6, 1e-6, 1e30, 1e-30, subnormal, zero, mixed in one row, stages of
// very different magnitude, and the values that stress the scale's bounds
// (m = 2^k·(2 − 2^-23), so that m·2^f rounds up to 2^15 in FP16). Beside
// them the BF16 parts of gemm28/gemm32 (three, and two for contrast).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

// E4M3 (bias 7, no Inf, 0x7f/0xff NaN) → double.
static double e4m3(uint8_t c) {
    int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
    double v = e ? ldexp(1 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return s ? -v : v;
}
// FP16 bits → double, and the sm_80 route's f16x2 FMA by 2^8 (exact for
// these values: the result is representable, so one rounding is none).
static double f16bits(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return s ? -v : v;
}
static double sm80_widen(uint8_t c) {
    uint16_t b = ((c & 0x7f) << 7) | ((c & 0x80) << 8);
    return f16bits(b) * 256.0;
}

static float f16r(float x) { return (float)(_Float16)x; }  // RNE, subnormals kept
static float bf16r(float x) {                              // cvt.rn.bf16.f32 (finite x)
    uint32_t u = f2u(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0x7fff + ((u >> 16) & 1);
    return u2f(u & 0xffff0000u);
}

enum { F16 = 0, BF3 = 1, BF2 = 2 };

// One output: W row w (q codes, scale per 128 columns), X row x, cols
// columns, stages of BK columns.
static float gemm_row(int mode, const uint8_t* q, const float* sc, const float* x, int cols, int BK) {
    float acc = 0.f;
    for (int k0 = 0; k0 < cols; k0 += BK) {
        const float s = sc[k0 / 128];
        float y[256];
        float m = 0.f;
        for (int k = 0; k < BK; k++) {
            y[k] = x[k0 + k] * s;
            m = fmaxf(m, fabsf(y[k]));
        }
        float sacc = 0.f;
        if (mode == F16) {
            int f = 141 - (int)(f2u(m) >> 23);
            if (f > 126) f = 126;
            const float fwd = u2f((uint32_t)(127 + f) << 23), inv = u2f((uint32_t)(127 - f) << 23);
            float lo_sum = 0.f, hi_sum = 0.f;  // the kernel's per-part stage accumulators
            for (int k = 0; k < BK; k++) {
                const float v = y[k] * fwd;
                const float hi = f16r(v), lo = f16r(v - hi);
                const double w = e4m3(q[k0 + k]);
                lo_sum = (float)((double)lo_sum + (double)lo * w);
                hi_sum = (float)((double)hi_sum + (double)hi * w);
            }
            sacc = lo_sum + hi_sum;
            acc = fmaf(sacc, inv, acc);
        } else {
            float p_sum[3] = {0, 0, 0};
            const int P = mode == BF3 ? 3 : 2;
            for (int k = 0; k < BK; k++) {
                float r = y[k];
                const double w = e4m3(q[k0 + k]);
                for (int p = 0; p < P; p++) {
                    const float h = bf16r(r);
                    r -= h;
                    p_sum[p] = (float)((double)p_sum[p] + (double)h * w);
                }
            }
            acc += p_sum[2] + p_sum[1] + p_sum[0];
        }
    }
    return acc;
}

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static double unif(void) { return (rnd() >> 11) * (1.0 / 9007199254740992.0); }
static double gauss(void) { return sqrt(-2 * log(unif() + 1e-300)) * cos(6.283185307179586 * unif()); }

#define COLS 2048
#define ROWS 64

int main(void) {
    // (1) every E4M3 code.
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        if ((c & 0x7f) == 0x7f) continue;
        const double v = e4m3(c);
        if (sm80_widen(c) != v) bad++, printf("sm80 widen: code %#x gives %g, want %g\n", c, sm80_widen(c), v);
        if ((double)(_Float16)v != v) bad++, printf("code %#x (%g) is not an FP16 value\n", c, v);
    }
    printf("E4M3 -> FP16: %d of 254 codes wrong (bit route and exactness)\n", bad);

    // W: random codes (NaN codes made 0x7e), scales 1e-3 … 1e-2 as the tests draw.
    static uint8_t q[ROWS][COLS];
    static float sc[ROWS][COLS / 128], wf[ROWS][COLS];
    for (int r = 0; r < ROWS; r++) {
        for (int k = 0; k < COLS / 128; k++) sc[r][k] = (float)(1e-3 * (1 + 9 * unif()));
        for (int k = 0; k < COLS; k++) {
            uint8_t c = rnd() & 0xff;
            if ((c & 0x7f) == 0x7f) c ^= 1;
            q[r][k] = c;
            wf[r][k] = (float)(e4m3(c) * sc[r][k / 128]);  // the CPU's float32 weight
        }
    }
    const char* names[] = {"gaussian", "gaussian x 1e6", "gaussian x 1e-6", "gaussian x 1e30", "gaussian x 1e-30",
                           "subnormal (1e-40)", "zeros", "one 1e6 in 1e-3 noise", "stages 1e4 / 1e-4 alternating",
                           "m = 2^k (2 - 2^-23)", "near FLT_MAX / 1e4", "SwiGLU-like heavy tail"};
    const int NC = sizeof names / sizeof names[0];
    static float x[COLS];
    int fails = 0;
    for (int bk = 32; bk <= 128; bk *= 2) {
        printf("\nBK %d columns a stage\n%-32s %12s %12s %12s   %12s %12s %12s\n", bk, "X rows", "F16 row", "BF16x3 row",
               "BF16x2 row", "F16 norm", "BF16x3 norm", "BF16x2 norm");
        for (int cse = 0; cse < NC; cse++) {
            double worst[3] = {0, 0, 0}, num[3] = {0, 0, 0}, den = 0;
            for (int trial = 0; trial < 8; trial++) {
                for (int k = 0; k < COLS; k++) {
                    double g = gauss();
                    switch (cse) {
                    case 0: x[k] = (float)g; break;
                    case 1: x[k] = (float)(g * 1e6); break;
                    case 2: x[k] = (float)(g * 1e-6); break;
                    case 3: x[k] = (float)(g * 1e30); break;
                    case 4: x[k] = (float)(g * 1e-30); break;
                    case 5: x[k] = (float)(g * 1e-40); break;
                    case 6: x[k] = 0.f; break;
                    case 7: x[k] = (float)(g * 1e-3); break;
                    case 8: x[k] = (float)(g * ((k / 32) & 1 ? 1e4 : 1e-4)); break;
                    case 9: x[k] = (float)g; break;
                    case 10: x[k] = (float)(g * 3e34); break;
                    case 11: x[k] = (float)(g * exp(3 * fabs(gauss()))); break;
                    }
                }
                if (cse == 7) x[rnd() % COLS] = 1e6f;
                if (cse == 9)  // every stage's largest |y| just below a power of two
                    for (int k0 = 0; k0 < COLS; k0 += 32) x[k0 + rnd() % 32] = ldexpf(2 - ldexpf(1, -23), (int)(rnd() % 40) - 20);
                for (int r = 0; r < ROWS; r++) {
                    double ref = 0, mag = 0;
                    for (int k = 0; k < COLS; k++) ref += (double)wf[r][k] * (double)x[k], mag += fabs((double)wf[r][k] * (double)x[k]);
                    const float reff = (float)ref;
                    den += (double)reff * reff;
                    for (int m = 0; m < 3; m++) {
                        const float got = gemm_row(m, q[r], sc[r], x, COLS, bk);
                        if (!isfinite(got)) {
                            printf("%s: mode %d not finite (%g, ref %g)\n", names[cse], m, got, reff);
                            fails++;
                            continue;
                        }
                        const double d = fabs((double)got - reff);
                        num[m] += d * d;
                        if (mag > 0) worst[m] = fmax(worst[m], d / mag);
                        else if (got != 0) worst[m] = INFINITY;
                    }
                }
            }
            double nrm[3];
            for (int m = 0; m < 3; m++) nrm[m] = den > 0 ? sqrt(num[m] / den) : sqrt(num[m]);  // zeros: absolute
            printf("%-32s %12.3g %12.3g %12.3g   %12.3g %12.3g %12.3g\n", names[cse], worst[0], worst[1], worst[2], nrm[0], nrm[1], nrm[2]);
            // F16's bound: each y·2^f within 2^-22 relative (|y·2^f| ≥ 2^-3, i.e.
            // within 2^-17 of the stage's largest) or 2^-25 absolute (2^-39 of the
            // stage's largest), products exact, float32 sums. So ≤ 1e-6 of Σ|w·x|
            // but where a stage spans more than 2^17 (case 7: 1e6 among 1e-3, a
            // 1e9 range; a row whose weight at the 1e6 column is ≈ 0 sees only the
            // small values' absolute error): there fast's 1e-4. Subnormal x (case
            // 5): y = x·s rounds in float32's subnormal range (as with BF16 parts,
            // which lose such y entirely): 2e-3.
            const double rowtol = cse == 7 ? 1e-4 : cse == 5 ? 1e-3 : 1e-6;
            const double nrmtol = cse == 5 ? 2e-3 : 2e-5;
            if (!(worst[0] <= rowtol)) fails++, printf("  F16 row error above %g of Σ|w·x|\n", rowtol);
            if (!(nrm[0] <= nrmtol)) fails++, printf("  F16 norm error above %g\n", nrmtol);
        }
    }
    // NaN and Inf: finite rows beside them are unaffected (each X row its own
    // scale), the row itself NaN/Inf.
    for (int k = 0; k < COLS; k++) x[k] = (float)gauss();
    x[5] = NAN;
    float g = gemm_row(F16, q[0], sc[0], x, COLS, 64);
    printf("\nrow with a NaN: %g (NaN expected)\n", g);
    if (!isnan(g)) fails++;
    x[5] = INFINITY;
    g = gemm_row(F16, q[0], sc[0], x, COLS, 64);
    printf("row with an Inf: %g (Inf or NaN expected)\n", g);
    if (isfinite(g)) fails++;
    printf("\n%s (%d failures)\n", fails ? "FAIL" : "PASS", fails);
    return fails != 0;
}
