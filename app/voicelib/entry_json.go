package voicelib

import "encoding/json"

// UnmarshalJSON reads voice.json, also as written before its figures said
// their units: seconds and source_rate, now duration_s and source_rate_hz.
// voice.json is always written with the new names.
func (e *Entry) UnmarshalJSON(data []byte) error {
	type entry Entry // Entry's fields without this method
	var v struct {
		entry
		OldSeconds    *float64 `json:"seconds"`
		OldSourceRate *int     `json:"source_rate"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*e = Entry(v.entry)
	if v.OldSeconds != nil && e.Seconds == 0 {
		e.Seconds = *v.OldSeconds
	}
	if v.OldSourceRate != nil && e.SourceRate == 0 {
		e.SourceRate = *v.OldSourceRate
	}
	return nil
}
