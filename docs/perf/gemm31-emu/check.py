#!/usr/bin/env python3
"""gemm31: host checks of kernels/gemm.cu's new index arithmetic (no GPU).

1. LDSM layouts (BF16 W, GEMM_MMA_PIPE, X split per warp): the W tile's
   swizzled 16-byte chunks (gemm_mma_ldsm_woff) and ldmatrix.x4's lane
   addresses give every lane the m16n8k16 A fragment in the MMA's own k
   order; the X tile's swizzled chunks (gemm_mma_ldsm_xoff) and
   gemm_mma_ldsm_x give the matching B values; the MMA built from all 32
   lanes' registers is W·Xᵀ over the step; ldmatrix's eight rows and each
   half warp's 8-byte X loads hit distinct banks.
2. The pipelined step loop's ring (cp.async groups, waits, barriers,
   refills; XS parts buffers): every read sees its tile landed and waited
   before a barrier, no stage or parts buffer is refilled while a thread
   may still read it, over ring depths 3..8 and 1..12 tiles.
A deliberate fault (`--break woff|xoff|lane|ahead|refill`) must fail.
Run: python3 docs/perf/gemm31-emu/check.py [--break …]
"""
import random
import sys

BREAK = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--break" else ""


def woff(r, c):  # gemm_mma_ldsm_woff
    sw = (r >> 1) & 3
    if BREAK == "woff":
        sw = r & 3
    return r * 64 + ((c ^ sw) << 4)


def xoff(r, c):  # gemm_mma_ldsm_xoff
    sw = r & 3
    if BREAK == "xoff":
        sw = 0
    return r * 128 + ((((c >> 1) ^ sw) << 5) | ((c & 1) << 4))


def x_read(r, s, tq):  # gemm_mma_ldsm_x: byte offsets of its four floats
    sw = r & 3
    if BREAK == "xoff":
        sw = 0
    p0 = r * 128 + (((2 * s) ^ sw) << 5) + 8 * tq
    p1 = r * 128 + (((2 * s + 1) ^ sw) << 5) + 8 * tq
    return [p0, p0 + 4, p1, p1 + 4]


def check_layouts(BM=128, BN=64):
    # W tile: BM rows × 4 chunks of 8 BF16 (one 32-column step).
    W = [[random.randint(-99, 99) for _ in range(32)] for _ in range(BM)]
    X = [[random.randint(-99, 99) for _ in range(32)] for _ in range(BN)]
    wsm, xsm = {}, {}
    for r in range(BM):
        for c in range(4):  # the cp.async piece (row r, columns 8c … 8c+7)
            d = woff(r, c)
            for e in range(8):
                assert d + 2 * e not in wsm, "W chunks overlap"
                wsm[d + 2 * e] = W[r][8 * c + e]
    assert sorted(wsm) == list(range(0, BM * 64, 2)), "W tile not covered"
    for r in range(BN):
        for c in range(8):
            d = xoff(r, c)
            for e in range(4):
                assert d + 4 * e not in xsm, "X chunks overlap"
                xsm[d + 4 * e] = X[r][4 * c + e]
    assert sorted(xsm) == list(range(0, BN * 128, 4)), "X tile not covered"
    bad = 0
    for s in range(2):
        for i0 in range(0, BM, 16):  # one 16-row A fragment (one i of a warp)
            # ldmatrix.x4: lane l gives row (l & 7) + (l & 8), chunk 2s + (l >> 4)
            addr = []
            for l in range(32):
                rr = i0 + (l & 7) + (l & 8)
                ch = 2 * s + (l >> 4)
                if BREAK == "lane":
                    rr = i0 + (l & 7) + ((l >> 4) << 3)
                    ch = 2 * s + ((l >> 3) & 1)
                addr.append(woff(rr, ch))
            for m in range(4):  # each matrix: its eight rows, distinct 16-byte bank groups
                groups = {(addr[8 * m + j] % 128) // 16 for j in range(8)}
                if len(groups) != 8:
                    bad += 1
            # Thread t gets from matrix m the pair at row t >> 2, elements 2(t & 3), +1.
            A = [[None] * 16 for _ in range(16)]
            for t in range(32):
                g, tq = t >> 2, t & 3
                regs = []
                for m in range(4):
                    base = addr[8 * m + g]
                    regs.append((wsm[base + 4 * tq], wsm[base + 4 * tq + 2]))
                # the MMA's A layout: a0 (g, 2tq), a1 (g+8, 2tq), a2 (g, 2tq+8), a3 (g+8, 2tq+8)
                for m, (row, k) in enumerate([(g, 2 * tq), (g + 8, 2 * tq), (g, 2 * tq + 8), (g + 8, 2 * tq + 8)]):
                    A[row][k], A[row][k + 1] = regs[m]
            for j0 in range(0, BN, 8):  # one 8-row B fragment
                B = [[None] * 8 for _ in range(16)]
                for t in range(32):
                    g, tq = t >> 2, t & 3
                    offs = x_read(j0 + g, s, tq)
                    v = [xsm[o] for o in offs]
                    # b0 = (k 2tq, 2tq+1; column g), b1 = (k 2tq+8, +9)
                    B[2 * tq][g], B[2 * tq + 1][g], B[2 * tq + 8][g], B[2 * tq + 9][g] = v
                # Half warps' 8-byte loads of one read: 16 lanes, 32 distinct banks.
                for h in range(2):
                    for part in range(2):
                        banks = set()
                        for t in range(16 * h, 16 * h + 16):
                            o = x_read(j0 + (t >> 2), s, t & 3)[2 * part]
                            banks |= {(o // 4) % 32, (o // 4 + 1) % 32}
                        if len(banks) != 32:
                            bad += 1
                for row in range(16):
                    for col in range(8):
                        got = sum(A[row][k] * B[k][col] for k in range(16))
                        want = sum(W[i0 + row][16 * s + k] * X[j0 + col][16 * s + k] for k in range(16))
                        assert got == want, f"MMA (s {s}, rows {i0}, cols {j0}) [{row}][{col}]: {got} != {want}"
    assert bad == 0, f"{bad} shared-memory accesses with bank conflicts"


def check_ring(ST, ktiles, XS):
    """The PIPE step loop (kernels/gemm.cu): groups issued in order, one per
    tile (empty past the last); wait<N> leaves the N newest pending (the worst
    case); a barrier publishes what every thread waited for."""
    AHEAD = 2
    issued = []      # issued[g] = (stage, tile)
    landed = 0       # groups complete
    content = {}     # stage -> tile being/been written
    visible = set()  # tiles waited for before the latest barrier
    reads = []       # (tile, stage) read since the latest barrier
    parts_w = {}     # XS parts buffer -> tile split into it
    parts_vis = set()
    parts_reads = []

    def load(st, kt):
        for t, s_ in reads:  # a thread may still read stage st after this barrier
            assert s_ != st, f"refill of stage {st} (tile {kt}) while tile {t} is read there"
        issued.append((st, kt))
        if kt is not None:
            content[st] = kt

    def wait(n):
        nonlocal landed
        landed = max(landed, len(issued) - n)

    def barrier():
        visible.clear()
        for g in range(landed):
            st, kt = issued[g]
            if kt is not None and content.get(st) == kt:
                visible.add(kt)
        reads.clear()
        parts_vis.clear()
        parts_vis.update(parts_w.items())
        parts_reads.clear()

    def read(kt, st):
        assert content.get(st) == kt and kt in visible, f"tile {kt} read from stage {st} before it is in"
        reads.append((kt, st))

    def split(kt, st):
        read(kt, st)
        b = kt & 1
        for t, b_ in parts_reads:
            assert b_ != b, f"parts buffer {b} rewritten (tile {kt}) while tile {t}'s parts are read"
        parts_w[b] = kt

    def read_parts(kt):
        assert (kt & 1, kt) in parts_vis, f"parts of tile {kt} read before a barrier published them"
        parts_reads.append((kt, kt & 1))

    for st in range(ST - 1):
        load(st, st if st < ktiles else None)
    wait(ST - 2)
    barrier()
    if XS:
        split(0, 0)
    read(0, 0)  # half_a(ring, 0, an) (and half_b without XS)
    st, st1, stl = 0, 1 % ST, ST - 1
    ahead = AHEAD if BREAK != "ahead" else 1
    for kt in range(ktiles):
        wait(ST - 1 - ahead)
        barrier()
        if BREAK == "refill":
            tgt = st  # the stage this step reads
        else:
            tgt = stl
        load(tgt, kt + ST - 1 if kt + ST - 1 < ktiles else None)
        stn = st1
        cur = st
        stl, st, st1 = st, st1, 0 if st1 + 1 == ST else st1 + 1
        if XS:
            read_parts(kt)  # half_b(ws, kt, 0, b0)
        read(kt, cur)       # half_a(ws, 1, a1), half_b(ws, kt, 1, b1)
        if XS:
            read_parts(kt)
        if kt + 1 < ktiles:
            if XS:
                split(kt + 1, stn)
            read(kt + 1, stn)  # half_a(ws1, 0, an), half_b(ws1, kt + 1, 0, bn)


def main():
    random.seed(31)
    check_layouts(128, 64)
    check_layouts(64, 16)
    n = 0
    for ST in range(3, 9):
        for ktiles in range(1, 13):
            for XS in (False, True):
                check_ring(ST, ktiles, XS)
                n += 1
    print(f"gemm31 emulation: LDSM layouts and MMA fragments exact, no bank conflicts; ring schedule safe in {n} cases")


if __name__ == "__main__":
    main()
