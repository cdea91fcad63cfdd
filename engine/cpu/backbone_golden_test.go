package cpu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"proscenium/engine/checkpoint"
)

// Goldens from HF transformers' Qwen3_5MoeForCausalLM in float32
// (tools/oracle/backbone.py) on tiny checkpoints in the real layout
// (testdata/backbone/ckpt/<geometry>: BF16 weights, block-FP8 experts).
// Tolerance: per-row ‖ours − ref‖/‖ref‖ < 1e-4.

const goldenTol = 1e-4

type goldenManifest struct {
	Transformers string `json:"transformers"`
	Torch        string `json:"torch"`
	Sequences    []struct {
		Name          string `json:"name"`
		IDs           []int  `json:"ids"`
		Hidden        string `json:"hidden"`
		Layers        string `json:"layers"`
		Embeddings    string `json:"embeddings"`
		EmbeddingRows []int  `json:"embedding_rows"`
	} `json:"sequences"`
}

func readNPYFloat32(t *testing.T, path string) ([]float32, []int) {
	t.Helper()
	tn, err := checkpoint.ReadNPYFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tn.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v, tn.Shape
}

func TestBackboneGoldens(t *testing.T) {
	for _, geom := range []string{"like", "odd"} {
		t.Run(geom, func(t *testing.T) {
			ckpt := filepath.Join("testdata", "backbone", "ckpt", geom)
			gold := filepath.Join("testdata", "backbone", "golden", geom)
			data, err := os.ReadFile(filepath.Join(gold, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m goldenManifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			cfg, w, err := LoadBackboneDir(ckpt)
			if err != nil {
				t.Fatal(err)
			}
			hid := cfg.HiddenSize
			for _, s := range m.Sequences {
				want, shape := readNPYFloat32(t, filepath.Join(gold, s.Hidden))
				if len(shape) != 2 || shape[0] != len(s.IDs) || shape[1] != hid {
					t.Fatalf("%s: golden shape %v, want [%d, %d]", s.Hidden, shape, len(s.IDs), hid)
				}
				rows := TokenRows(s.IDs)
				if s.Embeddings != "" {
					emb, _ := readNPYFloat32(t, filepath.Join(gold, s.Embeddings))
					for _, r := range s.EmbeddingRows {
						rows[r] = BackboneRow{Embedding: emb[r*hid : (r+1)*hid]}
					}
				}
				b, err := NewBackbone(cfg, w)
				if err != nil {
					t.Fatal(err)
				}
				var layers []float32
				b.LayerOutput = func(_ int, h []float32) { layers = append(layers, h...) }
				got, err := b.Run(rows)
				if err != nil {
					t.Fatal(err)
				}
				e, row := maxRowErr(got, want, hid)
				t.Logf("%s (%d rows, transformers %s): prefill max row error %.2g", s.Name, len(rows), m.Transformers, e)
				if !(e < goldenTol) {
					t.Errorf("%s: prefill row %d relative error %g", s.Name, row, e)
				}
				if s.Layers != "" {
					wantL, _ := readNPYFloat32(t, filepath.Join(gold, s.Layers))
					n := len(rows) * hid
					for l := 0; l*n < len(wantL); l++ {
						if e, row := maxRowErr(layers[l*n:(l+1)*n], wantL[l*n:(l+1)*n], hid); !(e < goldenTol) {
							t.Errorf("%s: layer %d output row %d relative error %g", s.Name, l, row, e)
						}
					}
				}
				// Incremental use: a prefill then one row at a time.
				if len(rows) > 8 {
					pre := min(70, len(rows)-5)
					b.Reset()
					b.LayerOutput = nil
					inc, err := b.Run(rows[:pre])
					if err != nil {
						t.Fatal(err)
					}
					for i := pre; i < len(rows); i++ {
						h, err := b.Run(rows[i : i+1])
						if err != nil {
							t.Fatal(err)
						}
						inc = append(inc, h...)
					}
					if e, row := maxRowErr(inc, want, hid); !(e < goldenTol) {
						t.Errorf("%s: prefill %d + steps: row %d relative error %g", s.Name, pre, row, e)
					}
				}
			}
		})
	}
}
