// Runs kernels/attention_prompt.cu's attn_flash_fast and attn_flash_combine_fast on the host
// (cuda_shim.h) against a double-precision attention over the same queries, cache and gates.
#include "cuda_shim.h"
#define FLASH2_SMEM_FLOATS_MAX ((64 + 32) * 260 + 32 * 68 + 64)
thread_local dim3 threadIdx;
dim3 blockIdx, gridDim, blockDim;
EmuBlock* emu;
// attn_flash2_fast's dynamic shared memory: one buffer (blocks run one at a time), NaN-poisoned
// per launch so a read of an unwritten float shows.
static std::vector<float> emu_dyn(FLASH2_SMEM_FLOATS_MAX);
#define FLASH2_SMEM_DECL float* flash2_smem = emu_dyn.data()
#include "attention_prompt.cu"
static int kernel_v = 1;  // 1: attn_flash_fast, 2: attn_flash2_fast (attn13)
#include <cstdio>
#include <random>
#include <string>

static double check(int nh, int nkv, int hd, int n, int pos, int capacity, int splits, unsigned seed, bool verbose) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    const int pw = (2 * nh + 2 * nkv) * hd;
    std::vector<float> qn((size_t)n * nh * hd), kc((size_t)capacity * nkv * hd), vc(kc.size()), proj((size_t)n * pw);
    for (auto& x : qn) x = U(rng) * 2;
    for (auto& x : kc) x = U(rng) * 2;
    for (auto& x : vc) x = U(rng);
    for (auto& x : proj) x = U(rng) * 3;
    // Keys past pos+n are "unwritten": NaN, so reading one shows.
    for (size_t r = std::min(capacity, pos + n); r < (size_t)capacity; r++)
        for (int i = 0; i < nkv * hd; i++) kc[r * nkv * hd + i] = vc[r * nkv * hd + i] = NAN;
    const int G = nh / nkv;
    const int bq = kernel_v == 2 ? FLASH2_BQ : FLASH_BQ;
    const int tiles = (n * G + bq - 1) / bq;
    std::vector<float> attn((size_t)n * nh * hd, NAN), part((size_t)n * nh * splits * (FLASH_PART_HEAD + hd), NAN);
    int32_t posv = pos;
    const float scale = 1.f / std::sqrt((float)hd);
    if (kernel_v == 2) {
        if ((size_t)FLASH2_SMEM_FLOATS(hd) > emu_dyn.size()) { printf("head dim %d past the emulation's buffer\n", hd); return 1e9; }
        std::fill(emu_dyn.begin(), emu_dyn.end(), NAN);
        emu_launch(dim3{(unsigned)tiles, (unsigned)nkv, (unsigned)splits}, FLASH2_THREADS, [&] {
            attn_flash2_fast(attn.data(), part.data(), qn.data(), kc.data(), vc.data(), proj.data(), &posv, n, capacity, nh,
                             nkv, hd, pw, splits, scale);
        });
    } else
        emu_launch(dim3{(unsigned)tiles, (unsigned)nkv, (unsigned)splits}, FLASH_THREADS, [&] {
            attn_flash_fast(attn.data(), part.data(), qn.data(), kc.data(), vc.data(), proj.data(), &posv, n, capacity, nh, nkv,
                            hd, pw, splits, scale);
        });
    if (splits > 1)
        emu_launch(dim3{(unsigned)(n * nh), 1, 1}, FLASH_THREADS, [&] {
            attn_flash_combine_fast(attn.data(), part.data(), proj.data(), &posv, capacity, nh, hd, pw, splits);
        });
    double worst = 0;
    for (int t = 0; t < n; t++)
        for (int h = 0; h < nh; h++) {
            const float* o = attn.data() + ((size_t)t * nh + h) * hd;
            if (pos + t >= capacity) {
                for (int d = 0; d < hd; d++)
                    if (!std::isnan(o[d])) { printf("row %d past capacity: %g not NaN\n", t, o[d]); return 1e9; }
                continue;
            }
            const int kvh = h / G, last = pos + t;
            std::vector<double> s(last + 1);
            double m = -INFINITY;
            const float* q = qn.data() + ((size_t)t * nh + h) * hd;
            for (int k = 0; k <= last; k++) {
                double d = 0;
                for (int i = 0; i < hd; i++) d += (double)q[i] * kc[((size_t)k * nkv + kvh) * hd + i];
                s[k] = d / std::sqrt((double)hd);
                m = std::max(m, s[k]);
            }
            double L = 0;
            std::vector<double> acc(hd);
            for (int k = 0; k <= last; k++) {
                const double e = std::exp(s[k] - m);
                L += e;
                for (int i = 0; i < hd; i++) acc[i] += e * vc[((size_t)k * nkv + kvh) * hd + i];
            }
            double num = 0, den = 0;
            for (int i = 0; i < hd; i++) {
                const double g = proj[(size_t)t * pw + (size_t)h * 2 * hd + hd + i];
                const double want = acc[i] / L / (1 + std::exp(-g));
                num += (o[i] - want) * (o[i] - want);
                den += want * want;
                if (std::isnan(o[i])) { printf("row %d head %d dim %d NaN\n", t, h, i); return 1e9; }
            }
            worst = std::max(worst, std::sqrt(num / den));
        }
    if (verbose)
        printf("kernel %d: nh %d nkv %d hd %d: %d rows after %d (capacity %d), %d splits, %d tiles: worst vector %.3g\n", kernel_v, nh, nkv, hd, n,
               pos, capacity, splits, tiles, worst);
    return worst;
}

int main(int argc, char** argv) {
    struct C { int nh, nkv, hd, n, pos, cap, splits; };
    std::vector<C> big = {{16, 2, 256, 5, 40, 64, 1}, {16, 2, 256, 5, 40, 64, 2}, {3, 1, 24, 60, 30, 100, 1}};
    std::vector<C> cs = {
        {3, 1, 24, 1, 0, 64, 1},    {3, 1, 24, 7, 0, 64, 1},     {3, 1, 24, 20, 10, 64, 1},  {3, 1, 24, 20, 10, 64, 3},
        {3, 1, 24, 40, 5, 64, 16},  {3, 1, 24, 30, 20, 40, 1},   {3, 1, 24, 30, 20, 40, 4},  // rows past the capacity
        {16, 2, 256, 3, 17, 64, 1}, {16, 2, 256, 3, 17, 64, 5},  {16, 2, 256, 1, 40, 64, 16},
        {4, 2, 8, 9, 3, 32, 2},     {8, 8, 32, 5, 33, 64, 2},
    };
    double worst = 0;
    unsigned seed = 1;
    // Arguments: [big] [v2] (v2: attn13's attn_flash2_fast; extra cases where a 64-vector block
    // spans several tiles of keys, rows past the capacity, a prefix).
    for (int a = 1; a < argc; a++) {
        if (std::string(argv[a]) == "big") cs = big;
        if (std::string(argv[a]) == "v2") kernel_v = 2;
    }
    if (kernel_v == 2)
        for (C c : std::vector<C>{{16, 2, 256, 12, 70, 128, 1}, {16, 2, 256, 12, 70, 128, 3}, {3, 1, 24, 50, 40, 80, 1},
                                   {3, 1, 24, 50, 40, 80, 2}, {4, 2, 8, 40, 0, 64, 1}, {3, 1, 24, 10, 100, 128, 8},
                                   {16, 2, 256, 8, 200, 256, 5}})
            cs.push_back(c);
    for (auto c : cs) worst = std::max(worst, check(c.nh, c.nkv, c.hd, c.n, c.pos, c.cap, c.splits, seed++, true));
    printf("worst %.3g\n", worst);
    return worst < 1e-5 ? 0 : 1;
}
