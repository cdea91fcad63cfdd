package scene

import (
	"math"
	"testing"
	"time"

	"proscenium/app/projects"
	"proscenium/engine/audio/decode"
	"proscenium/engine/audio/encode"
	"proscenium/engine/audio/loudness"
)

// bursts are 100 ms of a square wave every half second over quiet noise:
// their true peak, not their loudness, bounds the gain, and the codecs'
// low-pass rings at the square's edges (Gibbs), so the decoded true peak
// passes the one planned before encoding.
func bursts(seed uint64, rate int, seconds, hz float64) []float32 {
	out := noise(seed, rate, seconds, 0.01)
	for i := range out {
		if math.Mod(float64(i)/float64(rate), 0.5) >= 0.1 {
			continue
		}
		if math.Mod(float64(i)*hz/float64(rate), 1) < 0.5 {
			out[i] += 0.3
		} else {
			out[i] -= 0.3
		}
	}
	return out
}

// TestLossyScenesStayUnderTheCeiling: an MP3 or Opus scene, decoded again
// by the decoders the studio reads references with (libmpg123,
// libopusfile), has its true peak at or under -1 dBTP, however the
// encoding moved it, and its plan says the gain it took in the end and
// what the decoded file measures; so has each of its line files.
func TestLossyScenesStayUnderTheCeiling(t *testing.T) {
	const rate = 44100
	lines := []Line{{Take: 1, PCM: bursts(1, rate, 3, 220), Rate: rate}, {Take: 2, PCM: bursts(2, rate, 2, 330), Rate: rate}}
	wav, err := Assemble("s", lines, projects.ExportSettings{GapSeconds: 0.2, TargetLUFS: -9, Format: "wav", PerLine: true})
	if err != nil {
		t.Fatal(err)
	}
	// A lossless line file keeps the scene's gain exactly.
	for i, lf := range wav.LineFiles {
		if lf.Lowered != 0 || lf.TruePeak > Ceiling+1e-6 {
			t.Errorf("wav line %d: %+v, scene gain %.2f", i+1, lf, wav.Plan.GainDB)
		}
	}
	if len(wav.LineFiles) != 2 || wav.LoweredNote() != "" {
		t.Errorf("wav: line files %+v, note %q", wav.LineFiles, wav.LoweredNote())
	}
	for _, format := range []string{"mp3", "opus"} {
		// A loud target, so that the true peak is what bounds the gain.
		res, err := Assemble("s", lines, projects.ExportSettings{GapSeconds: 0.2, TargetLUFS: -9, Format: format, PerLine: true})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if res.Files[0].Name != "s."+format || len(res.Files) != 3 {
			t.Fatalf("%s: files %v", format, names(res.Files))
		}
		p, got, err := decode.Decode(res.Files[0].Data, 60)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		mono := p.Mono()
		tp := loudness.TruePeak(mono, p.Rate)
		lufs, err := loudness.Integrated(mono, p.Rate)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (%s, %d Hz): %.2f LUFS, true peak %.2f dBTP; plan %+v", format, got, p.Rate, lufs, tp, res.Plan)
		if tp > Ceiling+1e-9 || math.Abs(tp-res.Plan.ResultTP) > 1e-9 || math.Abs(lufs-res.Plan.Result) > 1e-9 {
			t.Errorf("%s: decoded %.3f LUFS, true peak %.3f dBTP, over the %v ceiling or not the plan's %+v", format, lufs, tp, Ceiling, res.Plan)
		}
		// The encoding moved the true peak over the ceiling the WAV keeps,
		// so the gain came down.
		if !res.Plan.Limited || res.Plan.GainDB >= wav.Plan.GainDB-0.05 {
			t.Errorf("%s: gain %.2f dB (WAV %.2f), limited %v: the lowering was not exercised", format, res.Plan.GainDB, wav.Plan.GainDB, res.Plan.Limited)
		}
		// Each line file, decoded, is under the ceiling too: at the scene's
		// gain, or lowered by what its own encoding added.
		lowered := false // rare here: the scene's gain already allows for the codec
		for i, lf := range res.LineFiles {
			p, _, err := decode.Decode(res.Files[1+i].Data, 60)
			if err != nil {
				t.Fatalf("%s line %d: %v", format, i+1, err)
			}
			tp := loudness.TruePeak(p.Mono(), p.Rate)
			t.Logf("%s line %d: true peak %.2f dBTP; %+v", format, i+1, tp, lf)
			if tp > Ceiling+1e-9 || math.Abs(tp-lf.TruePeak) > 1e-9 || lf.Line != i+1 || lf.Take != lines[i].Take ||
				lf.Lowered > 0 {
				t.Errorf("%s line %d: decoded true peak %.3f dBTP, over the ceiling or not its figures %+v (scene gain %.2f)", format, i+1, tp, lf, res.Plan.GainDB)
			}
			lowered = lowered || lf.Lowered < 0
		}
		if len(res.LineFiles) != 2 || lowered != (res.LoweredNote() != "") {
			t.Errorf("%s: line files %+v, note %q", format, res.LineFiles, res.LoweredNote())
		}
		res.Files = res.Files[:1]
		want := map[string]string{"mp3": "audio/mpeg", "opus": "audio/ogg; codecs=opus"}[format]
		if d, err := AsDownload(res, "s", time.Time{}); err != nil || d.MediaType != want || d.Name != "s."+format {
			t.Errorf("%s: download %q as %q, %v", format, d.Name, d.MediaType, err)
		}
	}
}

// TestLossyScenesReachTheTarget: a scene whose energy lies above the
// codec's low-pass (hiss) decodes quieter than the plan; the gain rises
// until the decoded file is on target.
func TestLossyScenesReachTheTarget(t *testing.T) {
	const rate = 44100
	hiss := noise(5, rate, 4, 0.05)
	for i := len(hiss) - 1; i > 0; i-- {
		hiss[i] -= hiss[i-1]
	}
	lines := []Line{{Take: 1, PCM: hiss, Rate: rate}}
	wav, err := Assemble("s", lines, projects.ExportSettings{TargetLUFS: -20, Format: "wav"})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"mp3", "opus"} {
		res, err := Assemble("s", lines, projects.ExportSettings{TargetLUFS: -20, Format: format})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		p, _, err := decode.Decode(res.Files[0].Data, 60)
		if err != nil {
			t.Fatal(err)
		}
		lufs, err := loudness.Integrated(p.Mono(), p.Rate)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.2f LUFS, gain %.2f dB (WAV %.2f); plan %+v", format, lufs, res.Plan.GainDB, wav.Plan.GainDB, res.Plan)
		if math.Abs(lufs+20) > lossyTolerance || res.Plan.Limited || res.Plan.ResultTP > Ceiling {
			t.Errorf("%s: decoded %.2f LUFS, want -20 ± %v: plan %+v", format, lufs, lossyTolerance, res.Plan)
		}
	}
}

// TestLineFilesStayUnderTheCeiling: a line file whose encoding passes the
// ceiling at the scene's gain (square bursts planned to exactly -1 dBTP
// ring over it) is lowered by the excess until its decoded true peak is
// under the ceiling, and says how far; a lossless file is left alone.
func TestLineFilesStayUnderTheCeiling(t *testing.T) {
	const rate = 44100
	line := bursts(3, rate, 2, 1000)
	loudness.Apply(line, Ceiling-loudness.TruePeak(line, rate))
	for _, name := range []string{"wav", "mp3", "opus"} {
		f, _ := encode.Lookup(name)
		pcm := append([]float32(nil), line...)
		data, lowered, peak, err := encodeUnderCeiling(f, rate, pcm, Ceiling)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, _, err := decode.Decode(data, 60)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tp := loudness.TruePeak(p.Mono(), p.Rate)
		t.Logf("%s: lowered %.2f dB, true peak %.2f dBTP (decoded %.2f)", name, lowered, peak, tp)
		tol := 1e-9 // a lossy file's figure is its decoded one
		if !lossy(f) {
			tol = 0.001 // 16-bit rounding of a file planned to the ceiling
		}
		if tp > Ceiling+tol || math.Abs(tp-peak) > tol {
			t.Errorf("%s: decoded true peak %.3f dBTP, reported %.3f, ceiling %v", name, tp, peak, Ceiling)
		}
		if lossy(f) == (lowered == 0) || lowered > 0 {
			t.Errorf("%s: lowered %.2f dB: a lossy file must come down, a lossless one stay", name, lowered)
		}
	}
}
