#!/usr/bin/env python3
"""gemm32's wide stages (kernels/gemm.cu GEMM_MMA_WIDE), emulated by address: every byte of a
ring stage tagged with the (row, column) the copies put there, then every lane's reads checked
against the columns the tile (KS 1) reads for the same sub-step, and the shared-memory
wavefronts of the fragment loads counted. No GPU: the kernel's index arithmetic, restated.

  python3 docs/perf/gemm32-emu/check.py       # exits non-zero on a mismatch

Planted faults (--fault wsub|psub|xoff: a read side that does not follow its writes) must fail it."""
import sys

FAULT = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--fault" else ""
BKB = 32  # GEMM_MMA_BK


def wsub(KS, SB, r, s, read=False):
    P = 128 // SB
    DIV = P // KS if P // KS > 1 else 1
    MASK = (KS if KS < P else P) - 1
    if FAULT == "wsub" and read:  # the fragment loads unswizzled, the copies swizzled
        MASK = 0
    return r * (KS * SB) + ((s ^ ((r // DIV) & MASK)) * SB)


def psub(KS, r, s, read=False):
    if FAULT == "psub" and KS > 1 and read:  # the B loads unswapped, the split's stores swapped
        return s
    return s ^ (r & 1) if KS > 1 else s


def xoff(KS, r, c, read=False):
    if FAULT == "xoff" and read:  # the split reads rows of one sub-step's 128 bytes
        KS = 1
    return r * (KS * BKB * 4) + ((c ^ (r & 1)) << 4)


def wavefronts(addrs, nbytes):
    """Shared-memory wavefronts of one warp's loads of nbytes each (32 banks of 4 bytes):
    8-byte loads go by half warp, 16-byte by quarter warp; a wavefront per distinct 4-byte word
    of a bank beyond the first (the usual conflict model)."""
    group = {4: 32, 8: 16, 16: 8}[nbytes]
    total = 0
    for g0 in range(0, 32, group):
        banks = {}
        for a in addrs[g0:g0 + group]:
            for w in range(a // 4, (a + nbytes) // 4):
                banks.setdefault(w % 32, set()).add(w)
        total += max(len(v) for v in banks.values())
    return total


def check(ELEM, KS, BN, BM=128):
    SB = BKB * ELEM
    WROWB = KS * SB
    BK = BKB * KS
    WBYTES = BM * WROWB
    errs = 0
    # W copies: piece c (16 bytes) of row r, element column c*16/ELEM, at wdst.
    ring = {}
    WPR = WROWB // 16
    for r in range(BM):
        for c in range(WPR):
            dst = r * WROWB + c * 16 if KS == 1 else wsub(KS, SB, r, c * 16 // SB) + c * 16 % SB
            for b in range(16):
                col = (c * 16 + b) // ELEM
                key = dst + b
                if key in ring:
                    errs += 1
                ring[key] = ("w", r, col, (c * 16 + b) % ELEM)
    assert max(ring) < WBYTES
    # X copies: chunk c (4 floats) of row r.
    XPR = 8 * KS
    for r in range(BN):
        for c in range(XPR):
            dst = WBYTES + xoff(KS, r, c)
            for b in range(16):
                if dst + b in ring:
                    errs += 1
                ring[dst + b] = ("x", r, c * 4 + b // 4)
    # The split: thread (r, c) reads X chunk c of row r and writes its pairs' words 2(c&7), +1
    # of sub-step c>>3 (parts of each part laid alike).
    parts = {}
    for r in range(BN):
        for c in range(XPR):
            src = WBYTES + xoff(KS, r, c, read=True)
            cols = [ring[src + 4 * i][2] for i in range(4)]
            if ring[src][1] != r or cols != [c * 4 + i for i in range(4)]:
                errs += 1
            w = r * (BK // 2) + 16 * psub(KS, r, c >> 3) + 2 * (c & 7)
            for i in range(2):
                if w + i in parts:
                    errs += 1
                parts[w + i] = (r, c, i)  # word i: pair P_i of chunk c of row r
    # Fragments: warp wm (16 W rows), lane (g, tq), sub-step ks: A from rows g, g+8, LB bytes
    # at wsub(r, ks) + LB*tq must be the row's columns 32ks + 8tq ... + 7; B of X row j*8+g from
    # words r*(BK/2) + 16*psub(r, ks) + 4tq ... + 3 must be chunks 2tq, 2tq+1 of sub-step ks.
    LB = 8 * ELEM
    conf = {}
    for ks in range(KS):
        for wm in range(BM // 16):
            for half in (0, 8):
                addrs = []
                for lane in range(32):
                    g, tq = lane >> 2, lane & 3
                    r = wm * 16 + half + g
                    a = wsub(KS, SB, r, ks, read=True) + LB * tq if KS > 1 else r * SB + LB * tq
                    addrs.append(a)
                    got = [ring[a + b] for b in range(LB)]
                    want = [("w", r, BKB * ks + 8 * tq + b // ELEM, b % ELEM) for b in range(LB)]
                    if got != want:
                        errs += 1
                conf.setdefault("A", []).append(wavefronts(addrs, LB))
        for j in range(BN // 8):
            addrs = []
            for lane in range(32):
                g, tq = lane >> 2, lane & 3
                r = j * 8 + g
                w = r * (BK // 2) + 16 * psub(KS, r, ks, read=True) + 4 * tq
                addrs.append(4 * w)
                got = [parts.get(w + i) for i in range(4)]
                want = [(r, 8 * ks + 2 * tq + i // 2, i % 2) for i in range(4)]
                if got != want:
                    errs += 1
            conf.setdefault("B", []).append(wavefronts(addrs, 16))
    return errs, max(conf["A"]), max(conf["B"])


bad = 0
for ELEM in (1, 2):
    for KS in (1, 2, 4):
        for BN in (8, 16, 32):
            errs, wa, wb = check(ELEM, KS, BN)
            ideal_a = 2 * ELEM  # 32 lanes × 8·ELEM bytes / 128 bytes a wavefront
            ok = errs == 0 and wa == ideal_a and wb == 4
            bad += not ok
            print(f"{'fp8 ' if ELEM == 1 else 'bf16'} KS {KS} BN {BN:2d}: {errs} misplaced, A loads {wa} wavefronts (ideal {ideal_a}), B loads {wb} (ideal 4) {'ok' if ok else 'FAIL'}")
print("FAIL" if bad else "all ok")
sys.exit(1 if bad else 0)
