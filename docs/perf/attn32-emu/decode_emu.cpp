// Runs kernels/attention_decode.cu's attn_decode_fast (and attn_decode_ahead_fast, which must give
// its bits) on the host (cuda_shim.h: each block's threads
// std::threads, warp shuffles through a per-warp buffer) against a float64 attention of the same
// projected rows and caches: the norms, the RoPE, the append, the softmax over the cache and the new
// row, the gate. Rows of several takes (slots), a row at the cache's last row, one past it, short
// and long caches, splits that leave blocks several chunks, and heads in more than one group.
#include "cuda_shim.h"
thread_local dim3 threadIdx;
dim3 blockIdx, gridDim, blockDim;
EmuBlock* emu;
#include "attention_decode.cu"
#include <cstdio>
#include <cstring>
#include <random>

struct Geo { int nh, nkv, hd, rot; double theta; };

static double check(Geo g, int cap, std::vector<int> pos, std::vector<int> slots, int splits, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    const int nh = g.nh, nkv = g.nkv, hd = g.hd, G = nh / nkv, B = slots.empty() ? 1 : (int)slots.size();
    const int nslots = (int)pos.size();
    const int pw = (2 * nh + 2 * nkv) * hd, kvw = nkv * hd;
    const long long stride = 2LL * cap * kvw + 8;  // a slot's K then V, and a gap
    std::vector<float> kv(stride * nslots), proj((size_t)B * pw), qnw(hd), knw(hd);
    for (auto& x : kv) x = U(rng);
    for (auto& x : proj) x = U(rng) * 2;
    for (auto& x : qnw) x = U(rng) * 0.3f;
    for (auto& x : knw) x = U(rng) * 0.3f;
    // Rows at or past each slot's position are "unwritten": NaN, so reading one shows.
    for (int s = 0; s < nslots; s++)
        for (int r = pos[s]; r < cap; r++)
            for (int i = 0; i < kvw; i++) kv[s * stride + (size_t)r * kvw + i] = kv[s * stride + (size_t)(cap + r) * kvw + i] = NAN;
    std::vector<float> kv0 = kv;
    const int hb = std::min(G, DEC_HG), groups = (G + hb - 1) / hb;
    std::vector<float> attn((size_t)B * nh * hd, NAN), part((size_t)B * nkv * groups * splits * hb * (DEC_PART_HEAD + hd), NAN);
    std::vector<unsigned> counters(B * nkv * groups, 0);
    std::vector<int32_t> posv(pos.begin(), pos.end()), slotv(slots.begin(), slots.end());
    const float scale = 1.f / std::sqrt((float)hd);
    const float eps = 1e-6f;
    // attn_decode_fast, then (dec28) attn_decode_ahead_fast on the same
    // inputs: the same bits, outputs and cache.
    const std::vector<float> attn0 = attn, part0 = part;
    std::vector<float> plainAttn, plainKV;
    for (int ahead = 0; ahead < 2; ahead++) {
        if (ahead) plainAttn = attn, plainKV = kv, attn = attn0, part = part0, kv = kv0;
        emu_launch(dim3{(unsigned)splits, (unsigned)(nkv * groups), (unsigned)B}, DEC_THREADS, [&] {
            (ahead ? attn_decode_ahead_fast : attn_decode_fast)(
                attn.data(), part.data(), counters.data(), kv.data(), kv.data() + (size_t)cap * kvw, proj.data(), qnw.data(),
                knw.data(), posv.data(), slots.empty() ? nullptr : slotv.data(), stride, cap, nh, nkv, hd, g.rot, g.theta, eps,
                scale, splits);
        });
        for (unsigned c : counters)
            if (c) { printf("counter left at %u\n", c); return 1e9; }
    }
    if (memcmp(attn.data(), plainAttn.data(), attn.size() * 4) || memcmp(kv.data(), plainKV.data(), kv.size() * 4)) {
        printf("attn_decode_ahead_fast: not attn_decode_fast's bits\n");
        return 1e9;
    }
    double worst = 0;
    auto normed = [&](const float* x, const std::vector<float>& w, int p) {
        std::vector<double> y(hd);
        double ss = 0;
        for (int i = 0; i < hd; i++) ss += (double)x[i] * x[i];
        const double inv = 1 / std::sqrt(ss / hd + eps);
        for (int i = 0; i < hd; i++) y[i] = x[i] * inv * (1 + (double)w[i]);
        std::vector<double> r = y;
        const int half = g.rot / 2;
        for (int d = 0; d < g.rot; d++) {
            const int i = d < half ? d : d - half;
            const float invf = (float)(1.0 / (double)(float)std::pow(g.theta, (double)((float)(2 * i) / (float)g.rot)));
            const double a = (double)((float)p * invf);
            r[d] = d < half ? y[d] * std::cos(a) - y[d + half] * std::sin(a) : y[d] * std::cos(a) + y[d - half] * std::sin(a);
        }
        return r;
    };
    for (int b = 0; b < B; b++) {
        const int s = slots.empty() ? 0 : slots[b], p = pos[s];
        const float* prow = proj.data() + (size_t)b * pw;
        float* K = kv.data() + s * stride;
        float* V = K + (size_t)cap * kvw;
        const float* K0 = kv0.data() + s * stride;
        if (p >= cap) {
            for (int i = 0; i < nh * hd; i++)
                if (!std::isnan(attn[(size_t)b * nh * hd + i])) { printf("row %d past the capacity: %g not NaN\n", b, attn[(size_t)b * nh * hd + i]); return 1e9; }
            for (size_t i = 0; i < (size_t)2 * cap * kvw; i++)
                if (!(std::isnan(K[i]) && std::isnan(K0[i])) && K[i] != K0[i]) { printf("row %d past the capacity wrote its cache\n", b); return 1e9; }
            continue;
        }
        for (int kvh = 0; kvh < nkv; kvh++) {
            std::vector<double> kn = normed(prow + (size_t)(2 * nh + kvh) * hd, knw, p);
            double num = 0, den = 0;
            for (int i = 0; i < hd; i++) {
                const double d = K[(size_t)p * kvw + kvh * hd + i] - kn[i];
                num += d * d, den += kn[i] * kn[i];
                if (V[(size_t)p * kvw + kvh * hd + i] != prow[(size_t)(2 * nh + nkv + kvh) * hd + i]) { printf("row %d: value not appended\n", b); return 1e9; }
            }
            if (!(std::sqrt(num / den) < 1e-6)) { printf("row %d kv head %d: appended key off by %.3g\n", b, kvh, std::sqrt(num / den)); return 1e9; }
        }
        for (int h = 0; h < nh; h++) {
            const int kvh = h / G;
            std::vector<double> q = normed(prow + (size_t)h * 2 * hd, qnw, p);
            std::vector<double> kn = normed(prow + (size_t)(2 * nh + kvh) * hd, knw, p);
            std::vector<double> sc(p + 1);
            double m = -INFINITY;
            for (int r = 0; r <= p; r++) {
                double d = 0;
                for (int i = 0; i < hd; i++) d += q[i] * (r == p ? kn[i] : (double)K0[(size_t)r * kvw + kvh * hd + i]);
                sc[r] = d / std::sqrt((double)hd);
                m = std::max(m, sc[r]);
            }
            double L = 0;
            std::vector<double> acc(hd);
            for (int r = 0; r <= p; r++) {
                const double e = std::exp(sc[r] - m);
                L += e;
                for (int i = 0; i < hd; i++) acc[i] += e * (r == p ? (double)prow[(size_t)(2 * nh + nkv + kvh) * hd + i] : (double)V[(size_t)r * kvw + kvh * hd + i]);
            }
            double num = 0, den = 0;
            const float* o = attn.data() + ((size_t)b * nh + h) * hd;
            for (int i = 0; i < hd; i++) {
                const double gt = prow[(size_t)h * 2 * hd + hd + i];
                const double want = acc[i] / L / (1 + std::exp(-gt));
                if (std::isnan(o[i])) { printf("row %d head %d dim %d NaN\n", b, h, i); return 1e9; }
                num += (o[i] - want) * (o[i] - want), den += want * want;
            }
            worst = std::max(worst, std::sqrt(num / den));
        }
    }
    printf("nh %d nkv %d hd %d rot %d, capacity %d, %d rows, %d splits: worst vector %.3g\n", nh, nkv, hd, g.rot, cap, B, splits, worst);
    return worst;
}

int main(int argc, char** argv) {
    const Geo full{16, 2, 256, 64, 1e7}, odd{3, 1, 24, 12, 1e4}, wide{12, 1, 32, 8, 1e4}, quad{8, 2, 64, 64, 1e6};
    double worst = 0;
    unsigned seed = 1;
    auto run = [&](Geo g, int cap, std::vector<int> pos, std::vector<int> slots, int splits) {
        worst = std::max(worst, check(g, cap, pos, slots, splits, seed++));
    };
    run(odd, 40, {0}, {}, 32);                  // the first row: itself only
    run(odd, 40, {17, 0, 39}, {2, 0, 1}, 32);   // three takes, one at the cache's last row
    run(odd, 40, {5, 40}, {1, 0}, 32);          // one row at the capacity: NaN, nothing cached
    run(odd, 400, {300}, {}, 4);                // 4 splits of 76 rows: three chunks each
    run(wide, 100, {70, 3}, {0, 1}, 8);         // 12 heads of one KV head: two groups
    run(quad, 200, {33, 64, 65}, {0, 1, 2}, 32);  // the split edges: 33 → 2 splits, 65 → 3
    run(quad, 1100, {700, 1099, 20}, {2, 0, 1}, 32);  // 22 splits (two merge batches), 32 of 35 rows (two chunks)
    run(full, 200, {150, 199}, {1, 0}, 2);     // 2 splits of up to 100 rows: four chunks, values through registers
    run(full, 64, {40}, {}, 32);
    run(full, 64, {17, 63, 0}, {1, 2, 0}, 32);
    if (argc > 1) {
        run(full, 1100, {1000}, {}, 32);        // a long cache: 32 splits of 32 rows
        run(full, 1100, {1099}, {}, 32);        // its last row: 32 splits of 35 (two chunks)
        run(full, 1100, {1000, 3, 1099, 640}, {2, 0, 3, 1}, 4);  // B = 4's grid: 4 splits of up to 275 rows
    }
    printf("worst %.3g\n", worst);
    return worst < 1e-5 ? 0 : 1;
}
