// Runs kernels/deltanet.cu's cluster step on the host (cuda_shim.h, run.sh):
// deltanet_step_cluster_fast (one row) and deltanet_step_cluster_slots_fast
// (B = 3 rows on slots 2, 0, 1) against a float64 one-row step written from
// engine/cpu deltaNetForward (conv over the window and the input, SiLU, q/k
// L2 norms, q·dk^-½, β = σ(b), g = −e^A_log·softplus(a + dt_bias), the delta
// rule on the state, o = Sᵀq, the gated RMSNorm), several steps in a row
// from random states, inputs and weights. Outputs start as NaN. The error is
// engine/cuda checkClose's, ‖got − ref‖/‖ref‖; bound 1e-5 (the outputs, the
// recurrent state); the conv window must be the reference's bits (a copy).
#include "cuda_shim.h"
thread_local dim3 threadIdx, blockIdx;
dim3 gridDim, blockDim;
thread_local EmuBlock* emu;
std::barrier<>* emu_cluster;
thread_local std::optional<std::barrier<>::arrival_token> emu_token;
#include "cluster.cu"
#include <cstdio>
#include <random>

struct Geo { const char* name; int nk, nv, dk, dv, K, steps; };
static std::mt19937_64 rng(7);
static float uni(float s) { return s * (float)(std::uniform_real_distribution<double>(-1, 1)(rng)); }

struct Layer {
    Geo g;
    int ch, vd, cw, pw, convF, sF;
    std::vector<float> convw, dt, alog, normw;
    explicit Layer(Geo g) : g(g) {
        ch = 2 * g.nk * g.dk + g.nv * g.dv, vd = g.nv * g.dv, cw = 2 * g.dk + g.dv, pw = ch + vd + 2 * g.nv;
        convF = (g.K - 1) * g.nv * cw, sF = g.nv * g.dk * g.dv;
        for (int i = 0; i < ch * g.K; i++) convw.push_back(uni(0.6f));
        for (int i = 0; i < g.nv; i++) dt.push_back(uni(1)), alog.push_back(uni(1));
        for (int i = 0; i < g.dv; i++) normw.push_back(1 + uni(0.15f));
    }
    int channel(int c, int h) const {
        const int kh = h / (g.nv / g.nk), dk = g.dk, nk = g.nk;
        return c < dk ? kh * dk + c : c < 2 * dk ? nk * dk + kh * dk + (c - dk) : 2 * nk * dk + h * g.dv + (c - 2 * dk);
    }
    // step: one row in float64 on state st (conv window then S) → out [nv·dv].
    void step(std::vector<double>& st, const float* proj, std::vector<double>& out) const {
        const int dk = g.dk, dv = g.dv, nv = g.nv, K = g.K;
        std::vector<double> nst = st;
        auto silu = [](double x) { return x / (1 + std::exp(-x)); };
        for (int h = 0; h < nv; h++) {
            std::vector<double> y(cw);
            for (int c = 0; c < cw; c++) {
                const int gc = channel(c, h);
                double acc = 0;
                for (int q = 0; q < K; q++) {
                    const double x = q < K - 1 ? st[((size_t)q * nv + h) * cw + c] : proj[gc];
                    acc += (double)convw[(size_t)gc * K + q] * x;
                    if (q >= 1) nst[((size_t)(q - 1) * nv + h) * cw + c] = x;  // the window moves on
                }
                y[c] = silu(acc);
            }
            double sq = 0, sk = 0;
            for (int i = 0; i < dk; i++) sq += y[i] * y[i], sk += y[dk + i] * y[dk + i];
            const double iq = 1 / std::sqrt(sq + 1e-6) / std::sqrt((double)dk), ik = 1 / std::sqrt(sk + 1e-6);
            const double b = proj[ch + vd + h], a = proj[ch + vd + nv + h];
            const double beta = 1 / (1 + std::exp(-b)), x = a + dt[h];
            const double eg = std::exp(-std::exp((double)alog[h]) * (x > 20 ? x : std::log1p(std::exp(x))));
            double* S = &nst[convF + (size_t)h * dk * dv];
            std::vector<double> o(dv);
            double ss = 0;
            for (int j = 0; j < dv; j++) {
                double u = 0;
                for (int i = 0; i < dk; i++) S[(size_t)i * dv + j] *= eg, u += S[(size_t)i * dv + j] * y[dk + i] * ik;
                const double d = beta * (y[2 * dk + j] - u);
                double oj = 0;
                for (int i = 0; i < dk; i++) S[(size_t)i * dv + j] += y[dk + i] * ik * d, oj += S[(size_t)i * dv + j] * y[i] * iq;
                o[j] = oj, ss += oj * oj;
            }
            const double inv = 1 / std::sqrt(ss / dv + 1e-6);
            for (int j = 0; j < dv; j++) out[(size_t)h * dv + j] = o[j] * inv * normw[j] * silu(proj[ch + h * dv + j]);
        }
        st = nst;
    }
};

static int fails = 0;
static void check(const char* what, const float* got, const double* ref, size_t n, double tol) {
    double num = 0, den = 0;
    bool nan = false;
    for (size_t i = 0; i < n; i++) {
        if (!std::isfinite(got[i])) nan = true;
        num += (got[i] - ref[i]) * (got[i] - ref[i]), den += ref[i] * ref[i];
    }
    const double rel = std::sqrt(num / den);
    const bool bad = nan || !(rel <= tol);
    fails += bad;
    printf("%-52s relative error %.3g%s%s\n", what, rel, nan ? " NaN" : "", bad ? "  FAIL" : "");
}

static void run(Geo g, int B) {
    Layer L(g);
    const int per = L.convF + L.sF, nslots = std::max(B, 1);
    const int slots[3] = {2, 0, 1};
    std::vector<float> state(nslots * per);
    for (int s = 0; s < nslots; s++) {
        for (int i = 0; i < L.convF; i++) state[s * per + i] = uni(1);
        for (int i = 0; i < L.sF; i++) state[s * per + L.convF + i] = uni(0.2f);
    }
    std::vector<std::vector<double>> ref(nslots);
    for (int s = 0; s < nslots; s++) ref[s].assign(state.begin() + s * per, state.begin() + (s + 1) * per);
    const int rows = std::max(B, 1);
    for (int t = 0; t < g.steps; t++) {
        std::vector<float> proj(rows * L.pw), core(rows * L.vd, NAN);
        for (auto& v : proj) v = uni(1);
        std::vector<double> want(rows * L.vd);
        if (B == 0) {
            emu_launch(dim3{(unsigned)g.nv, DNC_CLUSTER, 1}, DNC_THREADS, [&] {
                deltanet_step_cluster_fast(core.data(), proj.data(), state.data(), state.data() + L.convF, L.convw.data(),
                                           L.dt.data(), L.alog.data(), L.normw.data(), g.nk, g.nv, g.dk, g.dv, g.K, 1e-6f);
            });
            std::vector<double> o(L.vd);
            L.step(ref[0], proj.data(), o);
            std::copy(o.begin(), o.end(), want.begin());
        } else {
            std::vector<int32_t> sl(slots, slots + B);
            emu_launch(dim3{(unsigned)g.nv, DNC_CLUSTER, (unsigned)B}, DNC_THREADS, [&] {
                deltanet_step_cluster_slots_fast(core.data(), proj.data(), state.data(), state.data() + L.convF,
                                                 L.convw.data(), L.dt.data(), L.alog.data(), L.normw.data(), g.nk, g.nv, g.dk,
                                                 g.dv, g.K, 1e-6f, sl.data(), per);
            });
            for (int b = 0; b < B; b++) {
                std::vector<double> o(L.vd);
                L.step(ref[sl[b]], proj.data() + (size_t)b * L.pw, o);
                std::copy(o.begin(), o.end(), want.begin() + (size_t)b * L.vd);
            }
        }
        char what[128];
        snprintf(what, sizeof what, "%s %s step %d outputs", g.name, B ? "B = 3 (slots 2, 0, 1)" : "one row", t);
        check(what, core.data(), want.data(), core.size(), 1e-5);
    }
    for (int s = 0; s < nslots; s++) {
        char what[128];
        snprintf(what, sizeof what, "%s %s slot %d recurrent state", g.name, B ? "B = 3" : "one row", B ? s : 0);
        check(what, state.data() + s * per + L.convF, ref[s].data() + L.convF, L.sF, 1e-5);
        int differ = 0;
        for (int i = 0; i < L.convF; i++) differ += state[s * per + i] != (float)ref[s][i];
        snprintf(what, sizeof what, "%s %s slot %d conv window: values differing", g.name, B ? "B = 3" : "one row", B ? s : 0);
        printf("%-52s %d of %d%s\n", what, differ, L.convF, differ ? "  FAIL" : "");
        fails += differ != 0;
    }
}

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "quick";
    const Geo geos[] = {{"odd (2/6 heads of 20/28, K 4)", 2, 6, 20, 28, 4, 4},
                        {"edge (2/4 heads of 100/120, K 3)", 2, 4, 100, 120, 3, 3},
                        {"full (16/32 heads of 128, K 4)", 16, 32, 128, 128, 4, quick ? 1 : 2}};
    for (const Geo& g : geos) {
        run(g, 0);
        run(g, 3);
    }
    printf("%s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
