package cuda

import "fmt"

// towerFastRowsVariant is the SIMT instance a fast B-row tower projection of
// an [rows, cols] matrix over n rows takes where one measured faster than
// the instance with the one-row GEMV's split (Tower.rowsVariant), whose rows
// have the one-row bits: TestGemvRowsBandwidth at the tower's shapes on the
// H200 (docs/PERF.md "gate23": at 8 rows t64r4u1 for eh_proj 2048 × 4096,
// w2 2048 × 6144 and wo 2048 × 2048 (12.1, 16.7, 7.5 µs against t128r4u2's
// 13.2, 17.2, 9.3), t32r4u2 for qkv 2560 × 2048 and the semantic head
// 4097 × 2048 (11.4, 11.9 against 12.3, 16.3); at 4 rows t64r4u1 for those
// two (6.9, 7.6 against 7.1, 8.5) and t256r4u1 for the codebook heads
// 1024 × 2048 (3.7 against 4.5)). Another split sums a row in another
// order: within rounding of a take alone, so fast numerics only. ok is
// false where the one-row split stays.
func towerFastRowsVariant(rows, cols, n int) (v GemvVariant, ok bool) {
	switch w := gemvRowsWidth(n); {
	case w == 8 && (cols >= 4096 || rows == 2048 && cols == 2048):
		return GemvVariant{64, 4, 1}, true
	case w == 8 && rows >= 2560 && cols == 2048:
		return GemvVariant{32, 4, 2}, true
	case w == 4 && rows >= 2560 && cols == 2048:
		return GemvVariant{64, 4, 1}, true
	case w == 4 && rows <= 1024 && cols == 2048:
		return GemvVariant{256, 4, 1}, true
	}
	return GemvVariant{}, false
}

// parseTowerFastRows reads $PROSCENIUM_GPU_TOWER_FAST_ROWS (benchmarks), as
// the tower's other switches refusing a value it does not know: unset or 1,
// the measured instances (towerFastRowsVariant); 0, the one-row split's.
func parseTowerFastRows(s string) (bool, error) {
	switch s {
	case "", "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, fmt.Errorf("PROSCENIUM_GPU_TOWER_FAST_ROWS=%q: want 0 or 1", s)
}
