package cpu

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"proscenium/engine/checkpoint"
)

// Reading the codec's state dict: tensors by name with shape checks, and the
// weight-norm folding of both spellings.

// codecLoader fetches tensors from a codec state dict, remembering the first
// error and every tensor it consumed.
type codecLoader struct {
	ts     *checkpoint.TensorSet
	prefix string // before every key: "", "generator.", "state_dict.generator." …
	err    error
	used   map[string]bool
}

// codecAnchor is the key whose position fixes the prefix of a state dict.
const codecAnchor = "quantizer.semantic_quantizer.quantizers.0.codebook.weight"

// newCodecLoader finds the prefix under which the codec's keys sit: none in
// a plain state dict; training checkpoints nest it (fish-speech's loader
// strips "state_dict" and "generator."). Exactly one key may end in the
// anchor.
func newCodecLoader(ts *checkpoint.TensorSet) (*codecLoader, error) {
	l := &codecLoader{ts: ts, used: map[string]bool{}}
	var found []string
	for _, n := range ts.Names() {
		if n == codecAnchor || strings.HasSuffix(n, "."+codecAnchor) {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("codec: missing tensor %s (not a codec state dict?)", codecAnchor)
	case 1:
		l.prefix = strings.TrimSuffix(found[0], codecAnchor)
		return l, nil
	}
	return nil, fmt.Errorf("codec: %d codecs in one file (%s, %s)", len(found), found[0], found[1])
}

func (l *codecLoader) get(name string) *checkpoint.Tensor { return l.ts.Get(l.prefix + name) }

func (l *codecLoader) fail(format string, a ...any) {
	if l.err == nil {
		l.err = fmt.Errorf(format, a...)
	}
}

// has reports whether the tensor exists.
func (l *codecLoader) has(name string) bool { return l.get(name) != nil }

// shape returns a tensor's shape, or nil (and an error) if it is missing.
func (l *codecLoader) shape(name string) []int {
	t := l.get(name)
	if t == nil {
		l.fail("codec: missing tensor %s%s", l.prefix, name)
		return nil
	}
	return t.Shape
}

// f32 returns a tensor's values as float32, checking its shape.
func (l *codecLoader) f32(name string, shape ...int) []float32 {
	t := l.get(name)
	if t == nil {
		l.fail("codec: missing tensor %s%s", l.prefix, name)
		return nil
	}
	if !slices.Equal(t.Shape, shape) {
		l.fail("codec: tensor %s has shape %v, want %v", t.Name, t.Shape, shape)
		return nil
	}
	v, err := t.Float32s()
	if err != nil {
		l.fail("codec: %v", err)
		return nil
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			l.fail("codec: tensor %s holds a non-finite value at element %d", t.Name, i)
			return nil
		}
	}
	l.used[t.Name] = true
	return v
}

// weightNormed returns the weight of a weight-normed conv at prefix (the
// module holding `weight`), folded in float32: w = v · (g / ‖v‖) with the
// norm over every dim but 0, as torch's _weight_norm computes it. Both
// spellings are read: prefix.parametrizations.weight.original0/original1
// (torch.nn.utils.parametrizations) and prefix.weight_g/weight_v (the older
// torch.nn.utils.weight_norm). shape is v's shape.
func (l *codecLoader) weightNormed(prefix string, shape ...int) []float32 {
	gName, vName := prefix+".parametrizations.weight.original0", prefix+".parametrizations.weight.original1"
	if !l.has(gName) && l.has(prefix+".weight_g") {
		gName, vName = prefix+".weight_g", prefix+".weight_v"
	}
	gShape := make([]int, len(shape))
	for i := range gShape {
		gShape[i] = 1
	}
	if len(shape) > 0 {
		gShape[0] = shape[0]
	}
	g := l.f32(gName, gShape...)
	v := l.f32(vName, shape...)
	if g == nil || v == nil {
		return nil
	}
	rows := shape[0]
	per := len(v) / rows
	w := make([]float32, len(v))
	for r := 0; r < rows; r++ {
		vr := v[r*per : (r+1)*per]
		var ss float64
		for _, x := range vr {
			ss += float64(x) * float64(x)
		}
		norm := float32(math.Sqrt(ss))
		if norm == 0 {
			l.fail("codec: tensor %s%s: row %d of the weight-norm direction is zero", l.prefix, vName, r)
			return nil
		}
		scale := g[r] / norm
		for i, x := range vr {
			w[r*per+i] = x * scale
		}
	}
	return w
}

// unused lists the tensors under the decode path's prefixes that the loader
// did not consume: a checkpoint with modules this decoder does not know.
func (l *codecLoader) unused() []string {
	var out []string
	for _, full := range l.ts.Names() {
		n, ok := strings.CutPrefix(full, l.prefix)
		if l.used[full] || !ok {
			continue
		}
		decodePath := false
		for _, p := range []string{"decoder.", "quantizer.post_module.", "quantizer.upsample.", "quantizer.semantic_quantizer.", "quantizer.quantizer."} {
			decodePath = decodePath || strings.HasPrefix(n, p)
		}
		// The quantizers' in_proj projects encoder latents: encode only.
		if decodePath && !strings.Contains(n, ".in_proj.") {
			out = append(out, full)
		}
	}
	return out
}

// unusedUnder lists the tensors under the given prefixes (after the state
// dict's own prefix) that the loader did not consume.
func (l *codecLoader) unusedUnder(prefixes ...string) []string {
	var out []string
	for _, full := range l.ts.Names() {
		n, ok := strings.CutPrefix(full, l.prefix)
		if l.used[full] || !ok {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				out = append(out, full)
				break
			}
		}
	}
	return out
}
