//go:build cuda

package main

import (
	_ "embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// fullGeometry is the Qwen3.5-35B-A3B-shaped config.json of the real model
// (a copy of engine/drama3/testdata/drama3_full_shaped.json: embed cannot
// reach another package's files).
//
//go:embed full_geometry.json
var fullGeometry []byte

func init() {
	registerTool(tool{name: "bench-backbone", summary: "decode step and prefill of the backbone at the full geometry (random weights made on the device)", run: benchBackbone})
}

// backboneBench is what bench-backbone measures.
type backboneBench struct {
	Device       string  `json:"device"`
	Kernels      string  `json:"kernels"`
	Numerics     string  `json:"numerics"` // the backbone's numerics policy (--numerics)
	Geometry     string  `json:"geometry"`
	Context      int     `json:"context_rows"`
	PrefillRows  int     `json:"prefill_rows"`
	PrefillMS    float64 `json:"prefill_ms"`                 // wall ms of a prefill (best of three), experts the default way
	PrefillGroup float64 `json:"prefill_grouped_experts_ms"` // the same with the experts through the grouped GEMMs
	PrefillPairs float64 `json:"prefill_per_pair_experts_ms"`
	PrefillRowsE float64 `json:"prefill_rows_experts_ms"` // multi-row GEMVs, pairs per pass chosen by the backbone
	// PrefillRowsGroup: the multi-row GEMVs with each compiled number of
	// pairs per pass ("4", "8").
	PrefillRowsGroup map[string]float64 `json:"prefill_rows_experts_by_group_ms"`
	Steps            int                `json:"steps"`
	StepMS           float64            `json:"step_ms"`                // wall time per Step: input copy, graph, output copy, sync
	StepDeviceMS     float64            `json:"step_device_ms"`         // device time per graph replay
	StepNoMoEMS      float64            `json:"step_without_moe_ms"`    // profile: a step graph without the feed-forward
	StepNoMixMS      float64            `json:"step_without_mixers_ms"` // profile: without the mixers
	StepBytes        int64              `json:"step_bytes"`
	StepGBs          float64            `json:"step_gb_per_s"` // StepBytes / StepDeviceMS
	CopyGBs          float64            `json:"copy_gb_per_s"` // device-to-device copy, bytes read + written per second
	CopyShare        float64            `json:"copy_share"`    // StepGBs / CopyGBs
	ArenaBytes       int64              `json:"arena_bytes"`
	WorkBytes        int64              `json:"work_bytes"`
	DeviceBytes      int64              `json:"device_bytes"` // the pool's device memory in use
	PDL              bool               `json:"pdl"`
	Fused            bool               `json:"fused_step"`    // the step above ran the fused kernels (-fused, fast numerics)
	StepLaunches     int                `json:"step_launches"` // kernel launches of the step graph above
	// StepVariants: device ms per replay of step graphs captured with each
	// choice of one-row DeltaNet kernels, each after the same fresh prefill
	// (side by side).
	StepVariants []stepVariant `json:"step_variants"`
	// Prefills (-prefills): each prompt length's prefill and its parts.
	Prefills []prefillFigure `json:"prefills,omitempty"`
}

// prefillFigure is one prompt length's prefill (-prefills), wall ms, best
// of three each: whole, without the feed-forward, without the mixers, with
// the experts as multi-row GEMVs and (up to 128 rows) as per-pair GEMVs.
type prefillFigure struct {
	Rows       int     `json:"rows"`
	PassRows   int     `json:"pass_rows"`
	MS         float64 `json:"ms"`
	DeviceMS   float64 `json:"device_ms,omitempty"` // the same pass between events around its launches (best of three; one pass only: absent for longer prompts)
	NoMoEMS    float64 `json:"without_moe_ms"`
	NoMixersMS float64 `json:"without_mixers_ms"`
	GroupedMS  float64 `json:"grouped_experts_ms"`
	RowsMS     float64 `json:"rows_experts_ms,omitempty"`
	PairsMS    float64 `json:"per_pair_experts_ms,omitempty"`
}

// stepVariant is one choice of a decode step's kernels and its time.
type stepVariant struct {
	DeltaNet string  `json:"deltanet_step"` // fused or split
	Fused    bool    `json:"fused_step"`    // the fused step's kernels (engine/cuda fused.go)
	Launches int     `json:"step_launches"`
	DeviceMS float64 `json:"step_device_ms"`
}

// deltaNetSteps names the one-row DeltaNet kernels.
var deltaNetSteps = map[string]cuda.DeltaNetStep{"fused": cuda.DeltaNetFusedStep, "split": cuda.DeltaNetSplitStep}

func benchBackbone(args []string) error {
	fs := flag.NewFlagSet("proscenium-gpu bench-backbone", flag.ContinueOnError)
	synthetic := fs.String("synthetic", "full", "geometry of the random weights: full (Qwen3.5-35B-A3B shape, FP8 experts)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	context := fs.Int("context", 2048, "context limit in rows (KV caches and the step graph's attention span)")
	prefill := fs.Int("prefill", 60, "rows of the timed prefill")
	steps := fs.Int("steps", 100, "timed decode steps")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	profile := fs.Bool("profile-step", false, "only replay one step graph (after the prefill and three steps) inside a profiler range, for ncu --profile-from-start off; prints nothing else")
	dnStep := fs.String("deltanet-step", "", "with -profile-step: the one-row DeltaNet kernels, fused or split (default: the backbone's)")
	fused := fs.Bool("fused", os.Getenv(cuda.FusedEnv) == "1", "the fused decode step under fast numerics (default: $"+cuda.FusedEnv+" = 1); the step variants run both")
	prefillList := fs.String("prefills", "", "comma-separated prompt lengths: time only their prefills (whole, without the feed-forward, without the mixers, experts as multi-row GEMVs) and print them")
	rowsList := fs.String("rows", "", "only the B-row step (several takes in one step): comma-separated widths B (1…8), e.g. 1,2,4,8, each take after its own -prefill rows")
	profileRows := fs.Int("profile-rows", 0, "with -rows: after the B-row steps of this width are timed, replay one inside a profiler range, for ncu --profile-from-start off; prints nothing else")
	rowsExperts := fs.Bool("rows-experts", false, "with -rows: also time the B-row step with its routed experts as the prefill's multi-row GEMVs")
	ab := fs.String("ab", "", "with -prefills: ENV=A,B — time each prefill with prefill switch ENV at A and at B alternately in this process instead (switches: "+strings.Join(cuda.PrefillSwitches(), ", ")+")")
	profilePrefill := fs.Bool("profile-prefill", false, "only run one prefill pass of -prefill rows (after an untimed one) inside a profiler range, for ncu --profile-from-start off; prints nothing else")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *synthetic != "full" {
		return fmt.Errorf("--synthetic %q: the only geometry is full", *synthetic)
	}
	sizes, err := parseRowsList(*prefillList)
	if err != nil {
		return fmt.Errorf("--prefills: %w", err)
	}
	abEnv, abValues, err := parseAB(*ab)
	if err != nil {
		return err
	}
	if abEnv != "" && len(sizes) == 0 {
		return fmt.Errorf("--ab needs --prefills")
	}
	if len(sizes) > 0 && slices.Max(sizes) > *context {
		return fmt.Errorf("--prefills %s: more rows than --context %d", *prefillList, *context)
	}
	if *prefill < 1 || *steps < 1 || *prefill+2*(*steps)+3 > *context {
		return fmt.Errorf("--prefill %d and --steps %d must be positive and fit twice in --context %d", *prefill, *steps, *context)
	}
	cfg, err := drama3.ParseConfig(fullGeometry)
	if err != nil {
		return err
	}
	d, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	d.Numerics = numerics
	defer d.Close()
	res := backboneBench{Device: d.Info.Name, Kernels: d.Info.Kernels, Numerics: d.Numerics.String(), Context: *context, PrefillRows: *prefill, Steps: *steps, PDL: d.Info.PDL}
	t := &cfg.Text
	res.Geometry = fmt.Sprintf("hidden %d, %d layers (%d DeltaNet, %d attention), %d experts top-%d of %d, shared %d, experts %s",
		t.HiddenSize, t.NumLayers, t.CountLayers(drama3.LinearAttention), t.CountLayers(drama3.FullAttention),
		t.NumExperts, t.NumExpertsPerTok, t.MoEIntermediate, t.SharedIntermediate, map[bool]string{true: "FP8", false: "BF16"}[cfg.Quant.FP8()])

	if res.CopyGBs, err = copyBandwidth(d); err != nil {
		return err
	}
	if *rowsList != "" {
		widths, err := parseRows(*rowsList)
		if err != nil {
			return err
		}
		rr := rowsReport{Device: res.Device, Numerics: res.Numerics, Context: *context, PrefillRows: *prefill, CopyGBs: res.CopyGBs}
		if rr.Widths, rr.OneTakeMS, err = benchRows(d, cfg, *context, *prefill, *steps, widths, res.CopyGBs, *rowsExperts, *profileRows); err != nil || *profileRows > 0 {
			return err
		}
		if *asJSON {
			return printJSON(rr)
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "device\t%s (numerics %s), copy %.0f GB/s, context %d rows, each take after a %d-row prompt\n", rr.Device, rr.Numerics, rr.CopyGBs, rr.Context, rr.PrefillRows)
		printRows(w, rr.Widths, rr.OneTakeMS)
		return w.Flush()
	}
	b, err := syntheticBackbone(d, cfg, *context, 1, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	b.SetFused(*fused)
	res.Fused = b.Fused && !d.Numerics.Exact()
	res.ArenaBytes, res.WorkBytes = b.W.Layout.Bytes, b.Plan.Bytes
	res.DeviceBytes = d.Pool.Stats(cuda.DeviceMem).Used

	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]cuda.BackboneRow, *prefill)
	for i := range rows {
		rows[i].Token = r.IntN(t.VocabSize)
	}
	if abEnv != "" {
		return benchPrefillsAB(b, sizes, r, t.VocabSize, abEnv, abValues)
	}
	if len(sizes) > 0 {
		return benchPrefills(b, &res, sizes, r, t.VocabSize, *asJSON)
	}
	if *profilePrefill {
		if _, err := b.Prefill(rows); err != nil {
			return err
		}
		if err := b.Reset(); err != nil {
			return err
		}
		return b.ProfilePrefill(rows)
	}
	if *profile {
		if *dnStep != "" {
			k, ok := deltaNetSteps[*dnStep]
			if !ok {
				return fmt.Errorf("--deltanet-step %q: want fused or split", *dnStep)
			}
			b.SetDeltaNetStep(k)
		}
		if _, err := timeStepVariant(b, rows, 1, r, t.VocabSize); err != nil {
			return err
		}
		return b.ProfileStep()
	}
	// One untimed pass first (module loads, first-launch lookups).
	if _, err := b.Prefill(rows); err != nil {
		return err
	}
	if err := b.Reset(); err != nil {
		return err
	}
	prefillMS := func(path cuda.ExpertPath, group int) (float64, error) {
		b.Experts, b.ExpertGroup = path, group
		defer func() { b.Experts, b.ExpertGroup = cuda.ExpertsAuto, 0 }()
		best := 0.0
		for i := 0; i < 3; i++ {
			if err := b.Reset(); err != nil {
				return 0, err
			}
			start := time.Now()
			if _, err := b.Prefill(rows); err != nil {
				return 0, fmt.Errorf("prefill with the experts as %v: %w", path, err)
			}
			if ms := msSince(start); i == 0 || ms < best {
				best = ms
			}
		}
		return best, nil
	}
	res.PrefillRowsGroup = map[string]float64{}
	for _, m := range []struct {
		dst   *float64
		path  cuda.ExpertPath
		group int
	}{{&res.PrefillMS, cuda.ExpertsAuto, 0}, {&res.PrefillGroup, cuda.ExpertsGrouped, 0}, {&res.PrefillPairs, cuda.ExpertsGEMV, 0},
		{&res.PrefillRowsE, cuda.ExpertsRows, 0}} {
		if *m.dst, err = prefillMS(m.path, m.group); err != nil {
			return err
		}
	}
	for _, g := range []int{4, 8} {
		ms, err := prefillMS(cuda.ExpertsRows, g)
		if err != nil {
			return err
		}
		res.PrefillRowsGroup[fmt.Sprint(g)] = ms
	}
	// The steps follow a prefill, as in a take.
	if err := b.Reset(); err != nil {
		return err
	}
	if _, err := b.Prefill(rows); err != nil {
		return err
	}
	// The first step captures the graph; a few more warm up.
	for i := 0; i < 3; i++ {
		if _, err := b.Step(cuda.BackboneRow{Token: r.IntN(t.VocabSize)}); err != nil {
			return err
		}
	}
	start := time.Now()
	for i := 0; i < *steps; i++ {
		if _, err := b.Step(cuda.BackboneRow{Token: r.IntN(t.VocabSize)}); err != nil {
			return err
		}
	}
	res.StepMS = msSince(start) / float64(*steps)
	dev, err := b.TimeSteps(*steps)
	if err != nil {
		return err
	}
	res.StepDeviceMS = dev
	res.StepLaunches = b.StepLaunches()
	if res.StepNoMoEMS, err = b.TimeStepParts(cuda.StepMoE, *steps); err != nil {
		return err
	}
	if res.StepNoMixMS, err = b.TimeStepParts(cuda.StepMixers, *steps); err != nil {
		return err
	}
	variants := []stepVariant{{DeltaNet: "fused"}, {DeltaNet: "split"}}
	if !d.Numerics.Exact() {
		variants = append(variants, stepVariant{DeltaNet: "split", Fused: true})
	}
	for _, v := range variants {
		b.SetDeltaNetStep(deltaNetSteps[v.DeltaNet])
		b.SetFused(v.Fused)
		ms, err := timeStepVariant(b, rows, *steps, r, t.VocabSize)
		if err != nil {
			return fmt.Errorf("step with the %s DeltaNet kernels (fused step %v): %w", v.DeltaNet, v.Fused, err)
		}
		v.DeviceMS, v.Launches = ms, b.StepLaunches()
		res.StepVariants = append(res.StepVariants, v)
	}
	res.StepBytes = b.Plan.StepBytes(cfg, b.W.Layout.Experts[0], *prefill+*steps)
	res.StepGBs = float64(res.StepBytes) / (res.StepDeviceMS * 1e6)
	res.CopyShare = res.StepGBs / res.CopyGBs

	if *asJSON {
		return printJSON(res)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "device\t%s (kernels %s, PDL %v)\n", res.Device, res.Kernels, res.PDL)
	fmt.Fprintf(w, "numerics\t%s\n", res.Numerics)
	fmt.Fprintf(w, "geometry\t%s\n", res.Geometry)
	fmt.Fprintf(w, "context limit\t%d rows\n", res.Context)
	fmt.Fprintf(w, "prefill\t%.2f ms for %d rows, best of 3 (experts as grouped GEMMs %.2f ms, per-pair GEMVs %.2f ms, multi-row GEMVs %.2f ms: 4 pairs per pass %.2f ms, 8 %.2f ms)\n",
		res.PrefillMS, res.PrefillRows, res.PrefillGroup, res.PrefillPairs, res.PrefillRowsE, res.PrefillRowsGroup["4"], res.PrefillRowsGroup["8"])
	fmt.Fprintf(w, "decode step\t%.3f ms wall, %.3f ms on the device (mean of %d), %d launches (fused step %v)\n", res.StepMS, res.StepDeviceMS, res.Steps, res.StepLaunches, res.Fused)
	fmt.Fprintf(w, "step profile\t%.3f ms without the MoE, %.3f ms without the mixers (device)\n", res.StepNoMoEMS, res.StepNoMixMS)
	for _, v := range res.StepVariants {
		kind := "unfused"
		if v.Fused {
			kind = "fused"
		}
		fmt.Fprintf(w, "step variant\t%.3f ms on the device, %d launches: %s DeltaNet step, %s step\n", v.DeviceMS, v.Launches, v.DeltaNet, kind)
	}
	fmt.Fprintf(w, "read per step\t%.2f GB, %.0f GB/s = %.0f%% of the measured copy bandwidth (%.0f GB/s)\n",
		float64(res.StepBytes)/1e9, res.StepGBs, 100*res.CopyShare, res.CopyGBs)
	fmt.Fprintf(w, "device memory\t%.2f GiB (weights %.2f GiB, states and scratch %.0f MiB)\n",
		float64(res.DeviceBytes)/(1<<30), float64(res.ArenaBytes)/(1<<30), float64(res.WorkBytes)/(1<<20))
	return w.Flush()
}

// timeStepVariant resets b, prefills rows, captures the step graph (the
// first of three steps) and returns the device ms per replay over steps.
func timeStepVariant(b *cuda.Backbone, rows []cuda.BackboneRow, steps int, r *rand.Rand, vocab int) (float64, error) {
	if err := b.Reset(); err != nil {
		return 0, err
	}
	if _, err := b.Prefill(rows); err != nil {
		return 0, err
	}
	for i := 0; i < 3; i++ {
		if _, err := b.Step(cuda.BackboneRow{Token: r.IntN(vocab)}); err != nil {
			return 0, err
		}
	}
	return b.TimeSteps(steps)
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// copyBandwidth is a 1 GiB device-to-device copy's bytes read and written per
// second (best of five).
func copyBandwidth(d *cuda.Device) (float64, error) {
	const n = 1 << 30
	src, err := d.Alloc(n)
	if err != nil {
		return 0, err
	}
	defer d.Free(src)
	dst, err := d.Alloc(n)
	if err != nil {
		return 0, err
	}
	defer d.Free(dst)
	best := 0.0
	for i := 0; i < 6; i++ {
		ms, err := d.Time(func(q *cuda.Queue) error { return q.Copy(dst, src, n) })
		if err != nil {
			return 0, err
		}
		if i > 0 {
			best = max(best, 2*n/(ms*1e6))
		}
	}
	return best, nil
}

// parseRowsList parses "60,300,700" (empty: none).
func parseRowsList(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number of rows", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseAB reads -ab's ENV=A,B: a prefill switch and two of its values.
func parseAB(v string) (env string, values [2]string, err error) {
	if v == "" {
		return "", values, nil
	}
	env, vals, ok := strings.Cut(v, "=")
	a, b, ok2 := strings.Cut(vals, ",")
	if !ok || !ok2 || strings.Contains(b, ",") {
		return "", values, fmt.Errorf("--ab %q: want ENV=A,B", v)
	}
	for _, x := range []string{a, b} {
		if err := cuda.CheckPrefillSwitch(env, x); err != nil {
			return "", values, fmt.Errorf("--ab: %w", err)
		}
	}
	return env, [2]string{a, b}, nil
}

// benchPrefillsAB times each length's prefill (wall and device, from an
// empty context) with switch env at each of values, alternating in this
// process in the order A B, B A, A B, … (so that neither always runs
// first) over abRounds timed rounds after an untimed one, and prints each
// value's best and median.
func benchPrefillsAB(b *cuda.Backbone, sizes []int, r *rand.Rand, vocab int, env string, values [2]string) error {
	const abRounds = 6
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "rows\t%s\tprefill ms best\tmedian\tdevice ms best\tmedian\n", env)
	for _, n := range sizes {
		rows := make([]cuda.BackboneRow, n)
		for i := range rows {
			rows[i].Token = r.IntN(vocab)
		}
		var wall, dev [2][]float64
		for round := 0; round <= abRounds; round++ {
			for j := range values {
				k := j
				if round%2 == 1 {
					k = 1 - j
				}
				if err := cuda.SetPrefillSwitch(env, values[k]); err != nil {
					return err
				}
				ms, err := b.PrefillWithout(rows, 0)
				if err != nil {
					return err
				}
				dms := 0.0
				if n <= b.Plan.Chunk {
					if dms, err = b.PrefillDeviceMS(rows); err != nil {
						return err
					}
				}
				if round > 0 { // round 0 untimed: each choice's first launches
					wall[k], dev[k] = append(wall[k], ms), append(dev[k], dms)
				}
			}
		}
		for k, v := range values {
			slices.Sort(wall[k])
			slices.Sort(dev[k])
			fmt.Fprintf(w, "%d\t%s\t%.2f\t%.2f\t%s\t%s\n", n, v, wall[k][0], wall[k][abRounds/2], msOrDash(dev[k][0]), msOrDash(dev[k][abRounds/2]))
		}
	}
	if err := b.Reset(); err != nil {
		return err
	}
	return w.Flush()
}

// msOrDash prints a time, or "-" for one not measured (0: the device time
// of a prompt longer than one pass).
func msOrDash(ms float64) string {
	if ms == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", ms)
}

// benchPrefills times the prefill of each length in sizes (random tokens,
// from an empty context; best of three after an untimed one) whole, without
// the feed-forward, without the mixers, and with the experts as multi-row
// GEMVs, and prints them.
func benchPrefills(b *cuda.Backbone, res *backboneBench, sizes []int, r *rand.Rand, vocab int, asJSON bool) error {
	best := func(rows []cuda.BackboneRow, skip cuda.StepParts) (float64, error) {
		ms := 0.0
		for i := 0; i < 3; i++ {
			v, err := b.PrefillWithout(rows, skip)
			if err != nil {
				return 0, err
			}
			if i == 0 || v < ms {
				ms = v
			}
		}
		return ms, nil
	}
	for _, n := range sizes {
		rows := make([]cuda.BackboneRow, n)
		for i := range rows {
			rows[i].Token = r.IntN(vocab)
		}
		if _, err := b.PrefillWithout(rows, 0); err != nil { // untimed
			return err
		}
		fig := prefillFigure{Rows: n, PassRows: b.Plan.Chunk}
		var err error
		if fig.MS, err = best(rows, 0); err != nil {
			return err
		}
		for i := 0; i < 3 && n <= b.Plan.Chunk; i++ {
			v, err := b.PrefillDeviceMS(rows)
			if err != nil {
				return err
			}
			if i == 0 || v < fig.DeviceMS {
				fig.DeviceMS = v
			}
		}
		if fig.NoMoEMS, err = best(rows, cuda.StepMoE); err != nil {
			return err
		}
		if fig.NoMixersMS, err = best(rows, cuda.StepMixers); err != nil {
			return err
		}
		b.Experts = cuda.ExpertsGrouped
		fig.GroupedMS, err = best(rows, 0)
		if err == nil && n <= 128 { // per pair or group, each expert is read once per row or group: slow for long prompts
			b.Experts = cuda.ExpertsRows
			if fig.RowsMS, err = best(rows, 0); err == nil {
				b.Experts = cuda.ExpertsGEMV
				fig.PairsMS, err = best(rows, 0)
			}
		}
		b.Experts = cuda.ExpertsAuto
		if err != nil {
			return err
		}
		res.Prefills = append(res.Prefills, fig)
	}
	if err := b.Reset(); err != nil {
		return err
	}
	if asJSON {
		return printJSON(res)
	}
	fmt.Printf("device %s, numerics %s, experts %v, passes of %d rows (%s; work block %.0f MiB)\n", res.Device, res.Numerics, b.Experts, b.Plan.Chunk,
		cuda.PrefillPlanNow(), float64(b.Plan.Bytes)/(1<<20))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "rows\tprefill ms\tdevice ms\twithout MoE\twithout mixers\texperts as grouped GEMMs\tas multi-row GEMVs\tas per-pair GEMVs")
	for _, f := range res.Prefills {
		fmt.Fprintf(w, "%d\t%.2f\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", f.Rows, f.MS, msOrDash(f.DeviceMS), f.NoMoEMS, f.NoMixersMS, f.GroupedMS, f.RowsMS, f.PairsMS)
	}
	return w.Flush()
}
