package drama3

import "testing"

// The estimate for the Qwen3.5-35B-A3B-shaped config, every component
// written out by hand from the geometry (10 full + 30 linear layers, 13 tower
// layers, 256 experts of 512 × 2048 at FP8 with 128-blocks).
func TestEstimateMemoryFullShaped(t *testing.T) {
	cfg := fullShapedConfig(t)
	const (
		expertElems = int64(40 * 256 * 3 * 512 * 2048)
		// gate/up [512, 2048] and down [2048, 512]: 4 × 16 blocks each, float32.
		scaleBytes = int64(40*256*3) * 64 * 4
		allParams  = int64(35_429_350_016) // 34 660 610 688 backbone + 768 739 328 audio (weights_test)
	)
	wantWeights := expertElems + scaleBytes + (allParams-expertElems)*2
	if got := StoredWeightBytes(cfg); got != wantWeights {
		t.Errorf("stored weight bytes %d, want %d", got, wantWeights)
	}
	m := EstimateMemory(cfg, wantWeights, 8192)
	perRowAttn := int64(10 * 2 * 2 * 256 * 2)  // layers × (K, V) × kv heads × head_dim × bf16
	perRowTower := int64(13 * 2 * 2 * 128 * 2) // tower layers × (K, V) × kv heads × head_dim × bf16
	deltaNet := int64(30 * (32*128*128*4 + 3*(2*16*128+32*128)*4))
	if m.AttentionKV != 8192*perRowAttn || m.TowerKV != 8192*perRowTower || m.PerRowCaches != perRowAttn+perRowTower {
		t.Errorf("caches %+v, want attention %d tower %d per row", m, perRowAttn, perRowTower)
	}
	if m.DeltaNet != deltaNet {
		t.Errorf("DeltaNet state %d, want %d", m.DeltaNet, deltaNet)
	}
	// Scratch: 512 rows × (4·2048 + widest) × 4 B + (248320 + 1024) × 4 B. Per-row
	// widths: full attention 2·16·256 + 2·2·256 + 16·256 = 13312; linear attention
	// 8192 + 4096 + 2·32 + 4096 = 16448; MoE 256 + 8·2·512 + 2·512 = 9472; tower
	// 2·2048 + (16+2·2)·128 + 2·6144 = 18944, the widest.
	wantScratch := int64(512*(4*2048+18944)*4 + (248320+1024)*4)
	if m.Scratch != wantScratch || m.ScratchRows != 512 {
		t.Errorf("scratch %d over %d rows, want %d over 512", m.Scratch, m.ScratchRows, wantScratch)
	}
	if m.Total != m.Weights+m.AttentionKV+m.DeltaNet+m.TowerKV+m.Scratch {
		t.Errorf("total %d is not the sum of %+v", m.Total, m)
	}
	// A short context shrinks the prefill chunk to the context.
	if s := EstimateMemory(cfg, 0, 100); s.ScratchRows != 100 || s.AttentionKV != 100*perRowAttn {
		t.Errorf("short context: %+v", s)
	}
}
