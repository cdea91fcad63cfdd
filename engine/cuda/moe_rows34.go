package cuda

// rows34Modes parses $PROSCENIUM_GPU_MOE_ROWS (docs/PERF.md "rows34"): which
// of the B-row step's two routed-expert launches (gate·up, down) run by
// kernels/moe_rows34.cu instead of moe_gate_up_ids_* and moe_down2. "1" (or
// "on") both, "gateup" or "down" one, "0" (or "off") neither; empty: def.
func rows34Modes(v, def string) (gateUp, down bool) {
	if v == "" {
		v = def
	}
	switch v {
	case "1", "on":
		return true, true
	case "gateup":
		return true, false
	case "down":
		return false, true
	}
	return false, false
}

// moeRows34Default is what an unset $PROSCENIUM_GPU_MOE_ROWS means: off
// until the device run measures it (the flip: "1").
const moeRows34Default = "0"

// rows34GateUpFits reports whether moe_rows34_gate_up computes a B-row
// step's gate·up projection of this shape: n > 1 rows of k pairs (n·k ≤
// 64: the ids two a warp lane), FP8 matrices of rows outputs (a multiple of
// the 16-row item) over 2048 inputs, x rows 16-byte aligned.
func rows34GateUpFits(n, k, rows, cols, xpitch int) bool {
	return n > 1 && n*k <= 64 && k >= 1 && rows > 0 && rows%16 == 0 && cols == 2048 && xpitch%4 == 0
}

// rows34DownFits reports whether moe_rows34_down computes a B-row step's
// down projections of this shape: n > 1 rows of k pairs (n·k ≤ 64), FP8
// routed matrices [h, 512] (h a multiple of 16), the BF16 shared expert
// 512 wide, gate·up rows 16-byte aligned (p a multiple of 4), i ≤ 512.
func rows34DownFits(n, k, h, p, i, ip, is int) bool {
	return n > 1 && n*k <= 64 && k >= 1 && h > 0 && h%16 == 0 && ip == 512 && is == 512 && p%4 == 0 && i <= ip && i <= p
}

// rows34Tile8 is moe_rows34_gate_up's tile8: 1 (8-row items) where the
// 16-row items of pairs pairs would be fewer than three quarters of the
// warps (B ≤ 3 on an H200's 2112: B = 2's 1024 items leave ≈ 7.75 warps an
// SM, ≈ 46 KB in flight, below the copy rate), else 0.
func rows34Tile8(rows, pairs, warps int) int {
	if 4*(rows/16)*pairs < 3*warps {
		return 1
	}
	return 0
}
