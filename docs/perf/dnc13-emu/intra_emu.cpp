// Runs kernels/deltanet_chunk.cu's deltanet_chunk_intra_tiled (dnc13) on the
// host (docs/perf/chunk28-emu/cuda_shim.h: a block's threads are
// std::threads, __syncthreads a barrier, shuffles through per-thread slots)
// beside deltanet_chunk_intra_fast on the same inputs, the outputs poisoned
// with NaN first: cum, qm and am must agree (‖new − old‖/‖old‖ per head and
// chunk, engine/cuda checkClose's measure) and leave no NaN (every one of
// the 64 × 64 written). Then the fast solve and the tiled state pass after
// each, against a float64 gated delta rule computed row by row (dnstate34's
// emulation's reference): the outputs o and the final state within 1e-5.
// Last deltanet_chunk_norm_warp beside deltanet_chunk_norm_fast (norm_case)
// and deltanet_chunk_prep_rows beside deltanet_chunk_prep_fast (prep_case).
#include <tuple>
#include <vector>
#include <cstdlib>
#define __align__(n) __attribute__((aligned(n)))
#include "cuda_shim.h"
inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
// __shfl_up_sync: lane l reads lane l − d, its own value below d.
inline float __shfl_up_sync(unsigned, float v, int d) {
    const int l = threadIdx.x & 31;
    return emu_shfl(v, l >= d ? l - d : l);
}
alignas(16) static float emu_smem[64 * 1024];
#define DNC_EMU_SMEM emu_smem
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
    return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}
static std::vector<double> dbl(const std::vector<float>& x) { return std::vector<double>(x.begin(), x.end()); }

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

static bool run_case(const Geo& g, int n) {
    const int nv = g.nv, dk = g.dk, dv = g.dv, nch = (n + DNC_C - 1) / DNC_C;
    std::vector<float> qn((size_t)nv * n * dk, NAN), kn = qn, vv((size_t)nv * n * dv, NAN),
        beta((size_t)nv * n, NAN), decay = beta;
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
    std::vector<double> want((size_t)n * nv * dv), wantS(S0.begin(), S0.end());
    for (int h = 0; h < nv; h++) {
        std::vector<double> Sh(wantS.begin() + (size_t)h * dk * dv, wantS.begin() + (size_t)(h + 1) * dk * dv);
        const size_t r = (size_t)h * n;
        ref_rule(n, dk, dv, &qn[r * dk], &kn[r * dk], &vv[r * dv], &beta[r], &decay[r], Sh, want.data() + (size_t)h * dv, nv * dv);
        std::copy(Sh.begin(), Sh.end(), wantS.begin() + (size_t)h * dk * dv);
    }
    struct Out { std::vector<float> qm, am, cum, core, S; };
    auto rule = [&](bool tiled) {
        Out o{std::vector<float>((size_t)nv * nch * DNC_C * DNC_C, NAN), {}, std::vector<float>((size_t)nv * n, NAN), {}, S0};
        o.am = o.qm;
        if (tiled)
            emu_launch(dim3{(unsigned)nv, (unsigned)nch, 3}, DNC_IT_THREADS, [&] {
                deltanet_chunk_intra_tiled(o.qm.data(), o.am.data(), o.cum.data(), qn.data(), kn.data(), beta.data(), decay.data(), n, dk);
            });
        else
            emu_launch(dim3{(unsigned)nv, (unsigned)nch, 2}, DNC_INTRA_THREADS, [&] {
                deltanet_chunk_intra_fast(o.qm.data(), o.am.data(), o.cum.data(), qn.data(), kn.data(), beta.data(), decay.data(), n, dk);
            });
        std::vector<float> w0((size_t)nv * n * dk, NAN), d0((size_t)nv * n * dv, NAN);
        const unsigned cols = (dv + dk + DNC_SOLVE_THREADS - 1) / DNC_SOLVE_THREADS;
        emu_launch(dim3{(unsigned)nv, (unsigned)nch, cols}, DNC_SOLVE_THREADS, [&] {
            deltanet_chunk_solve_fast(w0.data(), d0.data(), o.am.data(), o.cum.data(), kn.data(), vv.data(), beta.data(), n, dk, dv);
        });
        o.core.assign((size_t)n * nv * dv, NAN);
        emu_launch(dim3{(unsigned)nv, (unsigned)((dv + 31) / 32), 1}, DNC_STATE_THREADS, [&] {
            if (threadIdx.x == 0) std::fill(std::begin(emu_smem), std::end(emu_smem), NAN);
            __syncthreads();
            deltanet_chunk_state_tiled(o.core.data(), o.S.data(), o.qm.data(), w0.data(), d0.data(), o.cum.data(), qn.data(), kn.data(), n, nv, dk, dv);
        });
        return o;
    };
    const Out old = rule(false), nw = rule(true);
    bool nan = false;
    // qm and am per head and chunk (the worst), cum whole.
    double wq = 0, wa = 0;
    const size_t cc = DNC_C * DNC_C;
    for (size_t b = 0; b < (size_t)nv * nch; b++) {
        std::vector<float> gq(nw.qm.begin() + b * cc, nw.qm.begin() + (b + 1) * cc), ga(nw.am.begin() + b * cc, nw.am.begin() + (b + 1) * cc);
        std::vector<double> rq(old.qm.begin() + b * cc, old.qm.begin() + (b + 1) * cc), ra(old.am.begin() + b * cc, old.am.begin() + (b + 1) * cc);
        wq = std::max(wq, rel(gq, rq, nan)), wa = std::max(wa, rel(ga, ra, nan));
        for (size_t e = 0; e < cc; e++)  // the zeros (above the diagonal, past L) exactly where the old kernel has them
            if ((rq[e] == 0) != (gq[e] == 0) || (ra[e] == 0) != (ga[e] == 0)) nan = true;
    }
    const double wc = rel(nw.cum, dbl(old.cum), nan);
    const double no = rel(nw.core, want, nan), ns = rel(nw.S, wantS, nan), oo = rel(old.core, want, nan), os = rel(old.S, wantS, nan);
    const bool pass = !nan && wq <= 1e-5 && wa <= 1e-5 && wc == 0 && no <= 1e-5 && ns <= 1e-5;
    printf("dk %3d dv %3d nv %d %3d rows: tiled vs fast intra qm %.3g am %.3g cum %.3g | rule vs float64: tiled o %.3g S %.3g, fast o %.3g S %.3g%s\n",
           dk, dv, nv, n, wq, wa, wc, no, ns, oo, os, pass ? "" : (nan ? "  FAIL (NaN or zero pattern)" : "  FAIL"));
    fflush(stdout);
    return pass;
}

// norm_case runs deltanet_chunk_norm_fast and deltanet_chunk_norm_warp on
// the same o, z and conv window (geometry g, n rows): the normed outputs
// within 1e-6 of each other (row by row, the worst), the advanced windows
// the same bits.
static bool norm_case(const Geo& g, int n) {
    const int nk = g.nk, nv = g.nv, dk = g.dk, dv = g.dv, K = g.K;
    const int ch = 2 * nk * dk + nv * dv, pw = ch + nv * dv + 2 * nv, cw = 2 * dk + dv;
    std::vector<float> proj((size_t)n * pw), core0((size_t)n * nv * dv), conv0((size_t)(K - 1) * nv * cw), normw(dv);
    for (auto& x : proj) x = 2 * nonzero();
    for (auto& x : core0) x = nonzero();
    for (auto& x : conv0) x = nonzero();
    for (auto& x : normw) x = 1 + 0.3f * U(-0.5f, 0.5f);
    std::vector<float> co = core0, cn = core0, so = conv0, sn = conv0;
    emu_launch(dim3{(unsigned)n, (unsigned)nv, 1}, DNC_NORM_THREADS, [&] {
        deltanet_chunk_norm_fast(co.data(), proj.data(), so.data(), normw.data(), n, nk, nv, dk, dv, K, 1e-6f);
    });
    emu_launch(dim3{(unsigned)((n * nv + DNC_NW_WARPS - 1) / DNC_NW_WARPS), 1, 1}, 32 * DNC_NW_WARPS, [&] {
        deltanet_chunk_norm_warp(cn.data(), proj.data(), sn.data(), normw.data(), n, nk, nv, dk, dv, K, 1e-6f);
    });
    bool nan = false;
    double worst = 0;
    for (size_t r = 0; r < (size_t)n * nv; r++) {
        std::vector<float> gr(cn.begin() + r * dv, cn.begin() + (r + 1) * dv);
        std::vector<double> rr(co.begin() + r * dv, co.begin() + (r + 1) * dv);
        worst = std::max(worst, rel(gr, rr, nan));
    }
    const bool same = std::memcmp(so.data(), sn.data(), so.size() * 4) == 0, pass = !nan && worst <= 1e-6 && same;
    printf("norm nk %d nv %d dk %3d dv %3d %3d rows: warp vs block, worst row %.3g, conv window %s%s\n", nk, nv, dk, dv, n,
           worst, same ? "the same bits" : "DIFFERS", pass ? "" : "  FAIL");
    return pass;
}

// prep_case runs deltanet_chunk_prep_fast and deltanet_chunk_prep_rows on
// the same projected rows and conv window (geometry g, n rows; the window's
// q/k channels differ between value heads, which the new kernel must not
// assume equal): qn, kn, v, β and g must be the same bits (each output's
// expression is the old one's, in its order), every one written (NaN
// first).
static bool prep_case(const Geo& g, int n) {
    const int nk = g.nk, nv = g.nv, dk = g.dk, dv = g.dv, K = g.K;
    const int ch = 2 * nk * dk + nv * dv, pw = ch + nv * dv + 2 * nv, cw = 2 * dk + dv;
    std::vector<float> proj((size_t)n * pw), conv((size_t)(K - 1) * nv * cw), convw((size_t)ch * K), dtb(nv), alog(nv);
    for (auto& x : proj) x = 2 * nonzero();
    for (auto& x : conv) x = nonzero();
    for (auto& x : convw) x = 0.6f * nonzero();
    for (auto& x : dtb) x = nonzero();
    for (auto& x : alog) x = nonzero();
    struct Out { std::vector<float> q, k, v, b, d; };
    auto fresh = [&] { return Out{std::vector<float>((size_t)nv * n * dk, NAN), std::vector<float>((size_t)nv * n * dk, NAN),
                                  std::vector<float>((size_t)nv * n * dv, NAN), std::vector<float>((size_t)nv * n, NAN),
                                  std::vector<float>((size_t)nv * n, NAN)}; };
    Out o = fresh(), w = fresh();
    emu_launch(dim3{(unsigned)n, (unsigned)nv, 1}, DNC_PREP_THREADS, [&] {
        deltanet_chunk_prep_fast(o.q.data(), o.k.data(), o.v.data(), o.b.data(), o.d.data(), proj.data(), conv.data(), convw.data(), dtb.data(), alog.data(), n, nk, nv, dk, dv, K);
    });
    emu_launch(dim3{(unsigned)((n + DNC_PR_ROWS - 1) / DNC_PR_ROWS), (unsigned)nk, 1}, 32 * (2 + nv / nk), [&] {
        deltanet_chunk_prep_rows(w.q.data(), w.k.data(), w.v.data(), w.b.data(), w.d.data(), proj.data(), conv.data(), convw.data(), dtb.data(), alog.data(), n, nk, nv, dk, dv, K);
    });
    bool pass = true;
    const char* names[] = {"qn", "kn", "v", "beta", "decay"};
    std::vector<float>* a[] = {&o.q, &o.k, &o.v, &o.b, &o.d};
    std::vector<float>* b[] = {&w.q, &w.k, &w.v, &w.b, &w.d};
    std::string bad;
    for (int i = 0; i < 5; i++) {
        size_t diff = 0;
        for (size_t e = 0; e < a[i]->size(); e++) diff += !(std::isfinite((*b[i])[e]) && __float_as_uint((*a[i])[e]) == __float_as_uint((*b[i])[e]));
        if (diff) bad += std::string(" ") + names[i] + " " + std::to_string(diff) + " differ", pass = false;
    }
    printf("prep nk %d nv %d dk %3d dv %3d K %d %3d rows: rows vs old, %s%s\n", nk, nv, dk, dv, K, n, pass ? "the same bits" : bad.c_str(), pass ? "" : "  FAIL");
    return pass;
}

int main(int argc, char** argv) {
    const Geo small{1, 3, 20, 28, 4}, full{1, 1, 128, 128, 4}, tail{1, 2, 38, 40, 4}, wide{1, 1, 190, 36, 4};
    struct C { Geo g; int n; };
    std::vector<C> cs;
    for (int n : {1, 2, 31, 32, 33, 63, 64, 65, 97, 300}) cs.push_back({small, n});
    for (int n : {1, 65, 130}) cs.push_back({tail, n});
    for (int n : {33, 130}) cs.push_back({wide, n});
    for (int n : {1, 63, 64, 65, 300, 700}) cs.push_back({full, n});
    const bool quick = argc > 1 && std::string(argv[1]) == "quick";
    if (quick) cs = {{small, 97}, {full, 65}};
    bool ok = true;
    for (auto& c : cs) {
        rng.seed(1000 * c.n + c.g.dk);
        ok &= run_case(c.g, c.n);
    }
    for (int n : {1, 2, 3, 5, 65, 300}) {
        if (quick) break;
        rng.seed(n);
        ok &= norm_case(Geo{2, 4, 20, 28, 4}, n);
        ok &= norm_case(Geo{2, 4, 128, 128, 4}, n);
    }
    for (int n : {1, 2, 3, 9, 65, 300}) {
        rng.seed(7 * n);
        ok &= prep_case(Geo{2, 4, 20, 28, 4}, n);
        ok &= prep_case(Geo{1, 3, 38, 40, 4}, n);
        ok &= prep_case(Geo{2, 4, 128, 128, 4}, n);
    }
    ok &= prep_case(Geo{1, 2, 190, 36, 4}, 17);
    printf("%s (bounds: tiled vs fast intra 1e-5 per head and chunk, cum the same bits; the rule 1e-5 of the float64 rule)\n", ok ? "all pass" : "FAILURES");
    return ok ? 0 : 1;
}
