package takes

import (
	"encoding/json"
	"fmt"
)

// take.json format 1, written before the studio's JSON said its units,
// named the take's speed frames_per_second and its rate sample_rate, and
// the finish's figures audio_seconds, time_to_first_audio and elapsed
// (integer nanoseconds) and stages (nanoseconds per stage). Format 2 names
// them frames_per_s, sample_rate_hz, audio_s, time_to_first_audio_ms,
// elapsed_s and stages_s. Takes saved in format 1 still load: upgradeFormat1
// rewrites their names and units; takes are always written in format 2.

// upgradeFormat1 returns data in format 2's names if it is format 1, else
// data unchanged (the strict decode judges it).
func upgradeFormat1(data []byte) ([]byte, error) {
	var file map[string]json.RawMessage
	var format int
	if json.Unmarshal(data, &file) != nil || json.Unmarshal(file["format"], &format) != nil || format != 1 {
		return data, nil
	}
	var take map[string]json.RawMessage
	if err := json.Unmarshal(file["take"], &take); err != nil || take == nil {
		return nil, fmt.Errorf("take: not an object")
	}
	rename(take, "frames_per_second", "frames_per_s")
	rename(take, "sample_rate", "sample_rate_hz")
	if raw, ok := take["finish"]; ok && string(raw) != "null" {
		var fin map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fin); err != nil || fin == nil {
			return nil, fmt.Errorf("finish: not an object")
		}
		rename(fin, "audio_seconds", "audio_s")
		if err := nanosTo(fin, "time_to_first_audio", "time_to_first_audio_ms", 1e6); err != nil {
			return nil, err
		}
		if err := nanosTo(fin, "elapsed", "elapsed_s", 1e9); err != nil {
			return nil, err
		}
		if raw, ok := fin["stages"]; ok {
			var stages map[string]int64
			if err := json.Unmarshal(raw, &stages); err != nil {
				return nil, fmt.Errorf("finish: stages: %v", err)
			}
			secs := make(map[string]float64, len(stages))
			for k, ns := range stages {
				secs[k] = float64(ns) / 1e9
			}
			delete(fin, "stages")
			fin["stages_s"] = mustJSON(secs)
		}
		take["finish"] = mustJSON(fin)
	}
	file["take"] = mustJSON(take)
	file["format"] = mustJSON(2)
	return json.Marshal(file)
}

// rename moves m[from] to m[to], if m has from.
func rename(m map[string]json.RawMessage, from, to string) {
	if v, ok := m[from]; ok {
		delete(m, from)
		m[to] = v
	}
}

// nanosTo replaces m[from], integer nanoseconds, with m[to] in the unit of
// per nanoseconds.
func nanosTo(m map[string]json.RawMessage, from, to string, per float64) error {
	raw, ok := m[from]
	if !ok {
		return nil
	}
	var ns int64
	if err := json.Unmarshal(raw, &ns); err != nil {
		return fmt.Errorf("finish: %s: %v", from, err)
	}
	delete(m, from)
	m[to] = mustJSON(float64(ns) / per)
	return nil
}

// mustJSON marshals maps and numbers, which cannot fail.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
