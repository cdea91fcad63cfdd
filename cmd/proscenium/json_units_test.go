package main

import (
	"reflect"
	"testing"

	"proscenium/app"
	"proscenium/app/model"
	"proscenium/app/playback"
	"proscenium/app/script"
	"proscenium/app/server"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/app/voicelib"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
	"proscenium/internal/jsonunits"
)

// TestJSONSaysItsUnits walks every type the program emits as JSON: what
// the studio's methods take and return (the Wails bindings and /api/*),
// its events, the engine's figures and the GPU worker's messages, the
// CLI's --json outputs (synth, inspect, gpu probe, tokenize) and the files
// it writes (take and voice metadata). A time.Duration, or a number whose
// name says no unit and is not a count, fails it.
// unitlessFields are numbers the JSON names after what they count.
var unitlessFields = []string{
	// inspect's parsed config.json: the model's geometry, dimensions and
	// counts (and its rope base, norm epsilon)
	"Config.*", "TextConfig.*", "AudioConfig.*", "QuantConfig.*",
	"ParameterReport.*",       // inspect's parameter counts: text, audio, total
	"Info.codebook_sizes",     // entries of each codebook
	"Rerun.value",             // the sampler setting Rerun.setting names (temperature, top_p, …)
	"TakesLimitChange.remove", // take ids
	"Line.chosen",             // the id of the take the scene uses
	"LineFile.line",           // a scene's line number
	"LineFile.take",           // the id of the take a line file holds
	"PreviewLine.line",        // a scene preview's line number
	"PreviewLine.take",        // the id of the take it plays there
	"Skipped.line",            // the number of a line the preview leaves out
}

func TestJSONSaysItsUnits(t *testing.T) {
	roots := []any{
		// the CLI
		synthSummary{}, probeReport{}, tokenizeOutput{}, drama3.Inspection{}, script.Screenplay{},
		// the engine and its worker
		api.Finish{}, api.Info{}, api.Stats{}, api.SpeechRequest{}, drama3.PrefixCacheStats{},
		gpuworker.Hello{}, gpuworker.Request{}, gpuworker.LoadRequest{}, gpuworker.Loaded{},
		gpuworker.SynthesizeArgs{}, gpuworker.TextArgs{}, gpuworker.TextCheck{}, gpuworker.EncodeArgs{},
		gpuworker.EncodedReference{}, gpuworker.FinishWire{}, gpuworker.Event{}, gpuworker.Reply{},
		// the studio's events and files
		model.ModelStatus{}, model.StatsView{}, model.LoadProgress{}, takes.Take{}, takes.AudioEvent{},
		studio.Notice{}, app.StudioStatus{}, playback.PlaybackStatus{}, server.ServerStatus{},
		voicelib.Entry{},
	}
	// What the studio's bound methods take and return.
	svc := reflect.TypeOf(&app.Service{})
	for i := range svc.NumMethod() {
		m := svc.Method(i).Type
		for j := 1; j < m.NumIn(); j++ {
			roots = append(roots, m.In(j))
		}
		for j := range m.NumOut() {
			roots = append(roots, m.Out(j))
		}
	}
	for _, p := range jsonunits.Check(unitlessFields, roots...) {
		t.Error(p)
	}
}
