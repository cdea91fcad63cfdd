// Runs kernels/deltanet_chunk.cu on the host (cuda_shim.h), both policies'
// instances, against a float64 gated delta rule computed row by row (the
// recurrence, the chunked form's definition: no chunk boundary in it):
//  rule:  deltanet_chunk_intra, _solve, _state on normed q, k, v, β, log
//         decays and a non-zero state, as engine/cuda TestDeltaNetChunkRule
//         feeds them (the outputs o and the final state compared);
//  mixer: deltanet_chunk_prep … _norm on projected rows, a conv window and
//         the layer's weights (the gated-norm outputs and the state
//         compared, the advanced conv window required exact).
// Scratch and outputs start as NaN, so an unwritten or misread value shows.
// The error is engine/cuda checkClose's: ‖got − ref‖/‖ref‖ over the array;
// the worst row (one head's dv outputs of one row) is printed beside it.
#include "cuda_shim.h"
thread_local dim3 threadIdx;
dim3 blockIdx, gridDim, blockDim;
EmuBlock* emu;
#include "deltanet_chunk.cu"
#include <cstdio>
#include <random>
#include <string>

struct Geo { int nk, nv, dk, dv, K; };
struct Err { double rel = 0, row = 0; };

static Err compare(const std::vector<float>& got, const std::vector<double>& ref, int rowlen, const char* what, bool& nan) {
    Err e;
    double num = 0, den = 0;
    for (size_t r0 = 0; r0 < ref.size(); r0 += rowlen) {
        double rn = 0, rd = 0;
        for (int i = 0; i < rowlen; i++) {
            const double g = got[r0 + i], d = g - ref[r0 + i];
            if (!std::isfinite(g)) {
                if (!nan) printf("  %s: element %zu is %g\n", what, r0 + i, g);
                nan = true;
            }
            rn += d * d, rd += ref[r0 + i] * ref[r0 + i];
        }
        num += rn, den += rd;
        if (rd > 0) e.row = std::max(e.row, std::sqrt(rn / rd));
    }
    e.rel = std::sqrt(num / den);
    return e;
}

// ref_rule runs the float64 recurrence for one head: S [dk][dv] in place,
// o [n][dv] (row stride ostride).
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

// Chunk scratch (head-major), as engine/cuda chunkScratch lays it out.
struct Scratch {
    std::vector<float> qn, kn, vv, beta, decay, cum, qm, am, w0, d0;
    Scratch(const Geo& g, int n) {
        const int nch = (n + DNC_C - 1) / DNC_C;
        qn.assign((size_t)g.nv * n * g.dk, NAN), kn = qn, w0 = qn;
        vv.assign((size_t)g.nv * n * g.dv, NAN), d0 = vv;
        beta.assign((size_t)g.nv * n, NAN), decay = beta, cum = beta;
        qm.assign((size_t)g.nv * nch * DNC_C * DNC_C, NAN), am = qm;
    }
};

// The rule's three launches, as engine/cuda deltaNetChunkRule makes them.
static void run_rule(bool fast, const Geo& g, int n, Scratch& s, std::vector<float>& core, std::vector<float>& S) {
    const int nch = (n + DNC_C - 1) / DNC_C, nv = g.nv, dk = g.dk, dv = g.dv;
    emu_launch(dim3{(unsigned)nv, (unsigned)nch, 2}, DNC_INTRA_THREADS, [&] {
        (fast ? deltanet_chunk_intra_fast : deltanet_chunk_intra)(s.qm.data(), s.am.data(), s.cum.data(), s.qn.data(),
                                                                  s.kn.data(), s.beta.data(), s.decay.data(), n, dk);
    });
    const unsigned cols = (dv + dk + DNC_SOLVE_THREADS - 1) / DNC_SOLVE_THREADS;
    emu_launch(dim3{(unsigned)nv, (unsigned)nch, cols}, DNC_SOLVE_THREADS, [&] {
        (fast ? deltanet_chunk_solve_fast : deltanet_chunk_solve)(s.w0.data(), s.d0.data(), s.am.data(), s.cum.data(),
                                                                  s.kn.data(), s.vv.data(), s.beta.data(), n, dk, dv);
    });
    emu_launch(dim3{(unsigned)nv, (unsigned)((dv + 31) / 32), 1}, DNC_STATE_THREADS, [&] {
        (fast ? deltanet_chunk_state_fast : deltanet_chunk_state)(core.data(), S.data(), s.qm.data(), s.w0.data(),
                                                                  s.d0.data(), s.cum.data(), s.qn.data(), s.kn.data(),
                                                                  n, nv, dk, dv);
    });
}

static std::mt19937 rng(1);
static float U(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
static float nonzero() { float x; do x = U(-1, 1); while (std::fabs(x) < 1e-3f); return x; }

// rule_case: TestDeltaNetChunkRule's inputs (q, k L2-normed, q ·dk^-½, β in
// (0, 1), log decays in (−1.5, 0), the state ±0.5).
static Err rule_case(bool fast, const Geo& g, int n, bool& nan) {
    const int nv = g.nv, dk = g.dk, dv = g.dv;
    Scratch s(g, n);
    for (int h = 0; h < nv; h++)
        for (int t = 0; t < n; t++) {
            const size_t r = (size_t)h * n + t;
            for (int which = 0; which < 2; which++) {
                float* x = (which ? s.kn.data() : s.qn.data()) + r * dk;
                double ss = 0;
                for (int a = 0; a < dk; a++) x[a] = nonzero(), ss += (double)x[a] * x[a];
                const double sc = 1 / std::sqrt(ss) / (which ? 1 : std::sqrt((double)dk));
                for (int a = 0; a < dk; a++) x[a] = (float)(x[a] * sc);
            }
            for (int j = 0; j < dv; j++) s.vv[r * dv + j] = nonzero();
            s.beta[r] = U(0, 1), s.decay[r] = -1.5f * U(0, 1);
        }
    std::vector<float> S0((size_t)nv * dk * dv);
    for (auto& x : S0) x = 0.5f * U(-1, 1);
    std::vector<float> core((size_t)n * nv * dv, NAN), S = S0;
    run_rule(fast, g, n, s, core, S);

    std::vector<double> want((size_t)n * nv * dv), wantS(S0.begin(), S0.end());
    for (int h = 0; h < nv; h++) {
        std::vector<double> Sh(wantS.begin() + (size_t)h * dk * dv, wantS.begin() + (size_t)(h + 1) * dk * dv);
        const size_t r = (size_t)h * n;
        ref_rule(n, dk, dv, &s.qn[r * dk], &s.kn[r * dk], &s.vv[r * dv], &s.beta[r], &s.decay[r], Sh,
                 want.data() + (size_t)h * dv, nv * dv);
        std::copy(Sh.begin(), Sh.end(), wantS.begin() + (size_t)h * dk * dv);
    }
    Err eo = compare(core, want, dv, "outputs", nan), es = compare(S, wantS, dv, "state", nan);
    return Err{std::max(eo.rel, es.rel), std::max(eo.row, es.row)};
}

// mixer_case: the whole chunked mixer between the projections and out_proj.
static Err mixer_case(bool fast, const Geo& g, int n, bool& nan) {
    const int nk = g.nk, nv = g.nv, dk = g.dk, dv = g.dv, K = g.K;
    const int ch = 2 * nk * dk + nv * dv, vd = nv * dv, pw = ch + vd + 2 * nv, cw = 2 * dk + dv;
    const float eps = 1e-6f;
    std::vector<float> proj((size_t)n * pw), conv((size_t)(K - 1) * nv * cw), convw((size_t)ch * K), dtb(nv), alog(nv),
        normw(dv);
    for (auto& x : proj) x = 2 * U(-1, 1);
    for (auto& x : conv) x = 2 * U(-1, 1);
    for (auto& x : convw) x = U(-1, 1);
    for (auto& x : dtb) x = U(-1, 1);
    for (auto& x : alog) x = U(-1, 1);
    for (auto& x : normw) x = U(0.5f, 1.5f);
    const std::vector<float> conv0 = conv;
    std::vector<float> S0((size_t)nv * dk * dv);
    for (auto& x : S0) x = 0.5f * U(-1, 1);
    Scratch s(g, n);
    std::vector<float> core((size_t)n * nv * dv, NAN), S = S0;
    emu_launch(dim3{(unsigned)n, (unsigned)nv, 1}, DNC_PREP_THREADS, [&] {
        (fast ? deltanet_chunk_prep_fast : deltanet_chunk_prep)(
            s.qn.data(), s.kn.data(), s.vv.data(), s.beta.data(), s.decay.data(), proj.data(), conv.data(),
            convw.data(), dtb.data(), alog.data(), n, nk, nv, dk, dv, K);
    });
    run_rule(fast, g, n, s, core, S);
    emu_launch(dim3{(unsigned)n, (unsigned)nv, 1}, DNC_NORM_THREADS, [&] {
        (fast ? deltanet_chunk_norm_fast : deltanet_chunk_norm)(core.data(), proj.data(), conv.data(), normw.data(), n,
                                                                nk, nv, dk, dv, K, eps);
    });

    // float64 mixer, per value head.
    std::vector<double> want((size_t)n * nv * dv), wantS(S0.begin(), S0.end());
    for (int h = 0; h < nv; h++) {
        const int kh = h / (nv / nk);
        std::vector<float> q((size_t)n * dk), k((size_t)n * dk), v((size_t)n * dv), be(n), de(n);
        for (int t = 0; t < n; t++) {
            std::vector<double> x(cw);
            for (int c = 0; c < cw; c++) {
                const int gc = c < dk ? kh * dk + c : c < 2 * dk ? nk * dk + kh * dk + (c - dk) : 2 * nk * dk + h * dv + (c - 2 * dk);
                double acc = 0;
                for (int qq = 0; qq < K; qq++) {
                    const int rr = t - (K - 1) + qq;
                    const double in = rr >= 0 ? proj[(size_t)rr * pw + gc] : conv0[(size_t)(K - 1 + rr) * nv * cw + h * cw + c];
                    acc += (double)convw[(size_t)gc * K + qq] * in;
                }
                x[c] = acc / (1 + std::exp(-acc));
            }
            double sq = 0, sk = 0;
            for (int a = 0; a < dk; a++) sq += x[a] * x[a], sk += x[dk + a] * x[dk + a];
            for (int a = 0; a < dk; a++) {
                q[(size_t)t * dk + a] = (float)(x[a] / std::sqrt(sq + 1e-6) / std::sqrt((double)dk));
                k[(size_t)t * dk + a] = (float)(x[dk + a] / std::sqrt(sk + 1e-6));
            }
            for (int j = 0; j < dv; j++) v[(size_t)t * dv + j] = (float)x[2 * dk + j];
            const double b = proj[(size_t)t * pw + ch + vd + h], a = proj[(size_t)t * pw + ch + vd + nv + h] + (double)dtb[h];
            be[t] = (float)(1 / (1 + std::exp(-b)));
            de[t] = (float)(-std::exp((double)alog[h]) * (a > 20 ? a : std::log1p(std::exp(a))));
        }
        // The rule in float64 on float inputs rounded from the float64 ones:
        // their rounding is a relative 2^-24 on each, far inside the tolerance.
        std::vector<double> Sh(wantS.begin() + (size_t)h * dk * dv, wantS.begin() + (size_t)(h + 1) * dk * dv);
        ref_rule(n, dk, dv, q.data(), k.data(), v.data(), be.data(), de.data(), Sh, want.data() + (size_t)h * dv, nv * dv);
        std::copy(Sh.begin(), Sh.end(), wantS.begin() + (size_t)h * dk * dv);
        for (int t = 0; t < n; t++) {
            double* o = want.data() + ((size_t)t * nv + h) * dv;
            double ss = 0;
            for (int j = 0; j < dv; j++) ss += o[j] * o[j];
            const double inv = 1 / std::sqrt(ss / dv + eps);
            for (int j = 0; j < dv; j++) {
                const double z = proj[(size_t)t * pw + ch + h * dv + j];
                o[j] = o[j] * inv * normw[j] * (z / (1 + std::exp(-z)));
            }
        }
    }
    // The conv window: the last K−1 pre-conv rows, exactly.
    for (int r = 0; r < K - 1; r++)
        for (int h = 0; h < nv; h++) {
            const int kh = h / (nv / nk);
            for (int c = 0; c < cw; c++) {
                const int gc = c < dk ? kh * dk + c : c < 2 * dk ? nk * dk + kh * dk + (c - dk) : 2 * nk * dk + h * dv + (c - 2 * dk);
                const int rr = n - (K - 1) + r;
                const float w = rr >= 0 ? proj[(size_t)rr * pw + gc] : conv0[(size_t)(r + n) * nv * cw + h * cw + c];
                if (conv[(size_t)r * nv * cw + h * cw + c] != w) {
                    if (!nan) printf("  conv window row %d head %d channel %d: %g, want %g\n", r, h, c, conv[(size_t)r * nv * cw + h * cw + c], w);
                    nan = true;
                }
            }
        }
    Err eo = compare(core, want, dv, "outputs", nan), es = compare(S, wantS, dv, "state", nan);
    return Err{std::max(eo.rel, es.rel), std::max(eo.row, es.row)};
}

int main(int argc, char** argv) {
    // small: the odd golden geometry's head dims (20/28, no multiple of 32;
    // 3 value heads a key head); full: one head of Drama 3's (128/128);
    // tail: key dims past a multiple of 4 (intra's tail loop, which 20 and
    // 128 skip) over two 32-wide tiles, and near the state slice's bound 192.
    const Geo small{1, 3, 20, 28, 4}, full{1, 1, 128, 128, 4}, tail{1, 2, 38, 40, 4}, wide{1, 1, 190, 36, 4};
    struct C { const char* kind; Geo g; int n; };
    std::vector<C> cs;
    for (int n : {1, 2, 63, 64, 65, 130, 300}) cs.push_back({"rule", small, n});
    for (int n : {1, 2, 63, 64, 65, 130, 300}) cs.push_back({"mixer", small, n});
    for (int n : {65, 300}) cs.push_back({"rule", full, n});
    cs.push_back({"mixer", full, 130});
    for (int n : {65, 130}) cs.push_back({"rule", tail, n}), cs.push_back({"mixer", tail, n});
    cs.push_back({"rule", wide, 130});
    if (argc > 1 && std::string(argv[1]) == "quick") cs = {{"rule", small, 130}, {"mixer", small, 65}};
    if (argc > 1 && std::string(argv[1]) == "tail") cs = {{"rule", tail, 65}, {"mixer", tail, 130}, {"rule", wide, 130}};
    double worst[2] = {0, 0};
    bool bad = false;
    for (auto& c : cs)
        for (int fast = 0; fast < 2; fast++) {
            bool nan = false;
            rng.seed(1000 * c.n + c.g.dk);  // the same inputs for both policies
            const Err e = std::string(c.kind) == "rule" ? rule_case(fast, c.g, c.n, nan) : mixer_case(fast, c.g, c.n, nan);
            printf("%-5s dk %3d dv %3d nv %d %3d rows %-5s: rel %.3g, worst row %.3g%s\n", c.kind, c.g.dk, c.g.dv, c.g.nv, c.n,
                   fast ? "fast" : "exact", e.rel, e.row, nan ? "  NOT FINITE OR WRONG WINDOW" : "");
            fflush(stdout);
            worst[fast] = std::max(worst[fast], e.rel);
            bad |= nan;
        }
    printf("worst relative error: exact %.3g, fast %.3g (engine/cuda TestDeltaNetChunkRule's bound 1e-5)\n", worst[0], worst[1]);
    return bad || worst[1] > 1e-5 || worst[0] > 1e-5 ? 1 : 0;
}
