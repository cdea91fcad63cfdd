// Runs kernels/deltanet_chunk.cu's deltanet_chunk_state_tiled (dnstate34) on
// the host (docs/perf/chunk28-emu/cuda_shim.h: a block's 512 threads are
// std::threads, __syncthreads a barrier) beside deltanet_chunk_state_fast,
// both after the fast intra and solve kernels, against a float64 gated delta
// rule computed row by row (the recurrence: no chunk boundary in it). The
// outputs o and the final state are compared (engine/cuda checkClose's
// ‖got − ref‖/‖ref‖), and the two kernels with each other.
//
// cp.async is modelled at both ends of what the hardware may do: "late" (a
// thread's copies land only at the cp.async.wait_group that covers them, so
// a read before the right wait and barrier sees the NaN the scratch starts
// as, or the previous chunk's data) and "early" (each copy lands at once, so
// a copy that overwrites shared data some warp still reads shows). The
// dynamic shared memory starts as NaN in every block.
#include <tuple>
#include <vector>
#include <cstdlib>
struct EmuCp { float* dst; const float* src; bool ok; };
static thread_local std::vector<std::vector<EmuCp>> emu_groups;
static thread_local std::vector<EmuCp> emu_open;
static bool emu_late = true;
static void emu_land(const EmuCp& c) { *c.dst = c.ok ? *c.src : 0.f; }
static void emu_cp4(float* d, const float* s, bool ok) {
    if (emu_late) emu_open.push_back({d, s, ok}); else emu_land({d, s, ok});
}
static void emu_commit() { emu_groups.push_back(emu_open); emu_open.clear(); }
static void emu_wait(int n) {
    while ((int)emu_groups.size() > n) {
        for (auto& c : emu_groups.front()) emu_land(c);
        emu_groups.erase(emu_groups.begin());
    }
}
alignas(16) static float emu_smem[64 * 1024];
#define DNC_EMU_CP4(d, s, ok) emu_cp4(d, s, ok)
#define DNC_EMU_COMMIT() emu_commit()
#define DNC_EMU_WAIT(n) emu_wait(n)
#define DNC_EMU_SMEM emu_smem
#include "cuda_shim.h"
thread_local dim3 threadIdx;
dim3 blockIdx, gridDim, blockDim;
EmuBlock* emu;
#include "deltanet_chunk.cu"
#include <cstdio>
#include <random>
#include <string>

struct Geo { int nk, nv, dk, dv, K; };

static double rel(const std::vector<float>& got, const std::vector<double>& ref, bool& nan) {
    double num = 0, den = 0;
    for (size_t i = 0; i < ref.size(); i++) {
        if (!std::isfinite(got[i])) nan = true;
        num += (got[i] - ref[i]) * (got[i] - ref[i]), den += ref[i] * ref[i];
    }
    return std::sqrt(num / den);
}

static void ref_rule(int n, int dk, int dv, const float* q, const float* k, const float* v, const float* beta,
                     const float* decay, std::vector<double>& S, double* o, int ostride) {
    std::vector<double> u(dv);
    for (int t = 0; t < n; t++) {
        const double eg = std::exp((double)decay[t]);
        for (auto& s : S) s *= eg;
        std::fill(u.begin(), u.end(), 0.0);
        for (int a = 0; a < dk; a++)
            for (int j = 0; j < dv; j++) u[j] += S[a * dv + j] * k[t * dk + a];
        for (int j = 0; j < dv; j++) u[j] = beta[t] * (v[t * dv + j] - u[j]);
        for (int a = 0; a < dk; a++)
            for (int j = 0; j < dv; j++) S[a * dv + j] += k[t * dk + a] * u[j];
        for (int j = 0; j < dv; j++) {
            double acc = 0;
            for (int a = 0; a < dk; a++) acc += S[a * dv + j] * q[t * dk + a];
            o[(size_t)t * ostride + j] = acc;
        }
    }
}

static std::mt19937 rng(1);
static float U(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
static float nonzero() { float x; do x = U(-1, 1); while (std::fabs(x) < 1e-3f); return x; }

// One case: TestDeltaNetChunkRule's inputs (q, k L2-normed, q ·dk^-½, β in
// (0, 1), log decays in (−1.5, 0), the state ±0.5); returns false on a
// failure (past 1e-5 of the float64 rule, or not finite).
static bool run_case(const Geo& g, int n) {
    const int nv = g.nv, dk = g.dk, dv = g.dv, nch = (n + DNC_C - 1) / DNC_C;
    std::vector<float> qn((size_t)nv * n * dk, NAN), kn = qn, w0 = qn, vv((size_t)nv * n * dv, NAN), d0 = vv,
        beta((size_t)nv * n, NAN), decay = beta, cum = beta, qm((size_t)nv * nch * DNC_C * DNC_C, NAN), am = qm;
    for (int h = 0; h < nv; h++)
        for (int t = 0; t < n; t++) {
            const size_t r = (size_t)h * n + t;
            for (int which = 0; which < 2; which++) {
                float* x = (which ? kn.data() : qn.data()) + r * dk;
                double ss = 0;
                for (int a = 0; a < dk; a++) x[a] = nonzero(), ss += (double)x[a] * x[a];
                const double sc = 1 / std::sqrt(ss) / (which ? 1 : std::sqrt((double)dk));
                for (int a = 0; a < dk; a++) x[a] = (float)(x[a] * sc);
            }
            for (int j = 0; j < dv; j++) vv[r * dv + j] = nonzero();
            beta[r] = U(0, 1), decay[r] = -1.5f * U(0, 1);
        }
    std::vector<float> S0((size_t)nv * dk * dv);
    for (auto& x : S0) x = 0.5f * U(-1, 1);
    emu_launch(dim3{(unsigned)nv, (unsigned)nch, 2}, DNC_INTRA_THREADS, [&] {
        deltanet_chunk_intra_fast(qm.data(), am.data(), cum.data(), qn.data(), kn.data(), beta.data(), decay.data(), n, dk);
    });
    const unsigned cols = (dv + dk + DNC_SOLVE_THREADS - 1) / DNC_SOLVE_THREADS;
    emu_launch(dim3{(unsigned)nv, (unsigned)nch, cols}, DNC_SOLVE_THREADS, [&] {
        deltanet_chunk_solve_fast(w0.data(), d0.data(), am.data(), cum.data(), kn.data(), vv.data(), beta.data(), n, dk, dv);
    });
    std::vector<double> want((size_t)n * nv * dv), wantS(S0.begin(), S0.end());
    for (int h = 0; h < nv; h++) {
        std::vector<double> Sh(wantS.begin() + (size_t)h * dk * dv, wantS.begin() + (size_t)(h + 1) * dk * dv);
        const size_t r = (size_t)h * n;
        ref_rule(n, dk, dv, &qn[r * dk], &kn[r * dk], &vv[r * dv], &beta[r], &decay[r], Sh, want.data() + (size_t)h * dv, nv * dv);
        std::copy(Sh.begin(), Sh.end(), wantS.begin() + (size_t)h * dk * dv);
    }
    const dim3 grid{(unsigned)nv, (unsigned)((dv + 31) / 32), 1};
    std::vector<float> coreF((size_t)n * nv * dv, NAN), SF = S0;
    emu_launch(grid, DNC_STATE_THREADS, [&] {
        deltanet_chunk_state_fast(coreF.data(), SF.data(), qm.data(), w0.data(), d0.data(), cum.data(), qn.data(), kn.data(), n, nv, dk, dv);
    });
    bool ok = true;
    for (int late = 1; late >= 0; late--) {
        emu_late = late;
        std::vector<float> coreT((size_t)n * nv * dv, NAN), ST = S0;
        emu_launch(grid, DNC_STATE_THREADS, [&] {
            if (threadIdx.x == 0) std::fill(std::begin(emu_smem), std::end(emu_smem), NAN);
            __syncthreads();
            deltanet_chunk_state_tiled(coreT.data(), ST.data(), qm.data(), w0.data(), d0.data(), cum.data(), qn.data(), kn.data(), n, nv, dk, dv);
            emu_wait(0);
            if (!emu_groups.empty() || !emu_open.empty()) { printf("  cp.async left uncommitted or unwaited\n"); std::abort(); }
            __syncthreads();
        });
        bool nan = false;
        const double ro = rel(coreT, want, nan), rs = rel(ST, wantS, nan), fo = rel(coreF, want, nan), fs = rel(SF, wantS, nan);
        std::vector<double> cf(coreF.begin(), coreF.end()), sf(SF.begin(), SF.end());
        const double xo = rel(coreT, cf, nan), xs = rel(ST, sf, nan);
        const bool pass = !nan && ro <= 1e-5 && rs <= 1e-5;
        printf("dk %3d dv %3d nv %d %3d rows cp.async %-5s: tiled o %.3g S %.3g | fast o %.3g S %.3g | tiled vs fast o %.3g S %.3g%s\n",
               dk, dv, nv, n, late ? "late" : "early", ro, rs, fo, fs, xo, xs, pass ? "" : "  FAIL");
        fflush(stdout);
        ok &= pass;
    }
    return ok;
}

int main(int argc, char** argv) {
    const Geo small{1, 3, 20, 28, 4}, full{1, 1, 128, 128, 4}, tail{1, 2, 38, 40, 4}, wide{1, 1, 190, 36, 4};
    struct C { Geo g; int n; };
    std::vector<C> cs;
    for (int n : {1, 2, 63, 64, 65, 130, 300}) cs.push_back({small, n});
    for (int n : {65, 130}) cs.push_back({tail, n});
    cs.push_back({wide, 130});
    for (int n : {65, 300, 700}) cs.push_back({full, n});
    if (argc > 1 && std::string(argv[1]) == "quick") cs = {{small, 130}, {tail, 65}, {wide, 67}};
    bool ok = true;
    for (auto& c : cs) {
        rng.seed(1000 * c.n + c.g.dk);
        ok &= run_case(c.g, c.n);
    }
    printf("%s (bound 1e-5 of the float64 rule, engine/cuda TestDeltaNetChunkRule's)\n", ok ? "all pass" : "FAILURES");
    return ok ? 0 : 1;
}
