package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"proscenium/engine/drama3"
	"proscenium/engine/open"
)

func init() {
	register(command{name: "inspect", summary: "geometry, parameters, memory estimate and unplaced/missing tensors of a checkpoint", run: func(args []string) error {
		return runInspect(args, os.Stdout)
	}})
}

// runInspect: proscenium inspect DIR [--context N] [--json]. It reports
// whatever it could read and returns an error (exit 1) naming the file or
// tensor when the directory cannot be loaded; unplaced tensors alone are
// listed, not fatal.
func runInspect(args []string, out io.Writer) error {
	fs := newFlags("inspect")
	context := fs.Int("context", 4096, "rows (text + audio frames) the memory estimate provisions caches for")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	memCap := memoryCapFlag(fs)
	voiceCache := voiceCacheFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: proscenium inspect (DIR | OWNER/NAME) [--context N] [--memory-cap SIZE] [--json]\n\nOWNER/NAME: a Hugging Face repository in the local cache (refs/main).")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: inspect takes one checkpoint directory, got %d arguments", errUsage, len(pos))
	}
	if *context <= 0 || *context > 1<<24 {
		return fmt.Errorf("%w: --context %d: want 1 … %d rows", errUsage, *context, 1<<24)
	}
	dir, err := resolveModel(pos[0])
	if err != nil {
		return err
	}
	rep, loadErr := drama3.Inspect(dir, *context)
	if loadErr != nil && rep.Config == nil && !*asJSON {
		return loadErr // nothing was read (no such folder, no config): no report to print around the error
	}
	var gpu *open.GPUMemory
	if loadErr == nil {
		if m, err := open.GPUMemoryOf(dir, open.Options{MemoryCap: memCap.or(0), VoiceCacheBytes: voiceCache.or(0)}); err == nil {
			gpu = &m
		}
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			*drama3.Inspection
			GPU *open.GPUMemory `json:"gpu,omitempty"`
		}{rep, gpu}); err != nil {
			return err
		}
	} else {
		printInspection(out, rep)
		printGPUMemory(out, gpu)
	}
	return loadErr
}

// printGPUMemory says what the GPU backend needs on the device: all of it,
// the least (every routed expert in pinned host memory), and the tier under
// --memory-cap.
func printGPUMemory(out io.Writer, m *open.GPUMemory) {
	if m == nil {
		return
	}
	voices := "up to " + byteSize(m.VoiceCache)
	if m.VoiceCacheUpTo > 0 {
		voices = fmt.Sprintf("%s or more (an eighth of the room left, up to %s)", byteSize(m.VoiceCache), byteSize(m.VoiceCacheUpTo))
	}
	fmt.Fprintf(out, "\nGPU backend (default context, the codec not counted): %s on the device with every weight there, and %s more for cached voices where the device has room (in pinned host memory where the experts are);\n", byteSize(m.Whole), voices)
	fmt.Fprintf(out, "  at least %s with every routed expert in pinned host memory (the last layer's also on the prefill stage, where steps read them) and the token embedding and LM head (%s) there too; each of the other %d layers' experts adds %s on the device, where an expert cache (its table %s) then keeps the experts the routing uses most\n",
		byteSize(m.Dense), byteSize(m.HostDense), m.Layers-1, byteSize(m.LayerExperts), byteSize(m.ExpertCache))
	if m.Cap > 0 {
		fmt.Fprintf(out, "  under a device budget of %s: %s\n", byteSize(m.Cap), m.UnderCap)
	}
}

func printInspection(out io.Writer, r *drama3.Inspection) {
	p := func(format string, a ...any) { fmt.Fprintf(out, format, a...) }
	p("checkpoint %s\n", r.Dir)
	if c := r.Config; c != nil {
		t, a := &c.Text, &c.Audio
		p("\nbackbone (text_config)\n")
		p("  hidden %d, %d layers (%d linear attention, %d full attention), vocab %d, tied LM head %v\n",
			t.HiddenSize, t.NumLayers, t.CountLayers(drama3.LinearAttention), t.CountLayers(drama3.FullAttention), t.VocabSize, t.TieWordEmbeddings)
		p("  layer types %s\n", layerPattern(t.LayerTypes))
		p("  full attention: %d heads, %d kv heads, head_dim %d, rotary %d dims (factor %g), theta %g\n",
			t.NumHeads, t.NumKVHeads, t.HeadDim, t.RotaryDim(), t.PartialRotaryFactor, t.RopeTheta)
		p("  linear attention: %d key heads of %d, %d value heads of %d, conv kernel %d\n",
			t.LinearNumKeyHeads, t.LinearKeyHeadDim, t.LinearNumValueHeads, t.LinearValueHeadDim, t.ConvKernel)
		p("  MoE: %d experts, top %d, expert FFN %d, shared FFN %d; RMS eps %g\n",
			t.NumExperts, t.NumExpertsPerTok, t.MoEIntermediate, t.SharedIntermediate, t.RMSNormEps)
		p("tower (audio_decoder_config)\n")
		p("  dim %d, %d shared + %d residual layers, %d heads, %d kv heads, head_dim %d, rotary %d dims, theta %g, FFN %d\n",
			a.Dim, a.SharedLayers, a.ResidualLayers(), a.NumHeads, a.NumKVHeads, a.HeadDim, a.RotaryDim(), a.RopeBase, a.IntermediateSize)
		p("  %d codebooks: %d semantic entries, %d per residual codebook\n", a.NumCodebooks, a.SemanticCodebookSize, a.CodebookSize)
		if c.Quant.FP8() {
			p("quantization: routed experts block-FP8, blocks [%d, %d]\n", c.Quant.BlockRows, c.Quant.BlockCols)
		} else {
			p("quantization: none\n")
		}
	}
	if r.Parameters != nil {
		p("\nparameters (from the geometry): %s total = %s backbone + %s tower, heads and codebooks\n",
			billions(r.Parameters.Total), billions(r.Parameters.Text), billions(r.Parameters.Audio))
	}
	if r.Stored != nil {
		p("stored: %d files, %s", len(r.Files), byteSize(r.StoredBytes))
		dts := make([]string, 0, len(r.Stored))
		for d := range r.Stored {
			dts = append(dts, d)
		}
		sort.Strings(dts)
		for _, d := range dts {
			s := r.Stored[d]
			p("; %s %d tensors, %d elements, %s", d, s.Tensors, s.Elements, byteSize(s.Bytes))
		}
		p("\n")
		p("prefixes: backbone %q, audio %q\n", r.BackbonePrefix, r.AudioPrefix)
	}
	if m := r.Memory; m != nil {
		p("\ndevice memory for %d rows of context (weights from %s): %s\n", m.Context, r.MemoryBasis, byteSize(m.Total))
		p("  weights %s, attention KV %s, DeltaNet state %s, tower KV %s, scratch %s (prefill chunk %d rows); each further row adds %s\n",
			byteSize(m.Weights), byteSize(m.AttentionKV), byteSize(m.DeltaNet), byteSize(m.TowerKV), byteSize(m.Scratch), m.ScratchRows, byteSize(m.PerRowCaches))
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			p("%s: none\n", title)
			return
		}
		p("%s (%d):\n", title, len(items))
		for _, s := range items {
			p("  %s\n", s)
		}
	}
	if r.Stored != nil {
		p("\n")
		list("unplaced tensors", r.Unplaced)
		list("missing tensors", r.Missing)
		list("problems", r.Problems)
	}
	if r.Error != "" {
		p("\ncannot load: %s\n", r.Error)
	}
}

// layerPattern writes layer types compactly: "L L L F ×10".
func layerPattern(types []drama3.LayerType) string {
	letters := make([]string, len(types))
	for i, t := range types {
		letters[i] = map[drama3.LayerType]string{drama3.LinearAttention: "L", drama3.FullAttention: "F"}[t]
	}
	for period := 1; period <= len(letters)/2; period++ {
		if len(letters)%period != 0 {
			continue
		}
		repeats := true
		for i := period; i < len(letters); i++ {
			if letters[i] != letters[i-period] {
				repeats = false
				break
			}
		}
		if repeats {
			return fmt.Sprintf("%s ×%d", strings.Join(letters[:period], ""), len(letters)/period)
		}
	}
	return strings.Join(letters, "")
}

func billions(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B (%d)", float64(n)/1e9, n)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M (%d)", float64(n)/1e6, n)
	}
	return fmt.Sprint(n)
}

func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
