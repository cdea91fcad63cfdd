package projects

import (
	"bytes"
	"encoding/json"
)

// UnmarshalJSON reads a project's export settings, also as written before
// the figures said their units: gap_seconds, now gap_s. Unknown fields are
// refused, as in the rest of project.json; they are always written as gap_s.
func (e *ExportSettings) UnmarshalJSON(data []byte) error {
	type exportSettings ExportSettings // the fields without this method
	var v struct {
		exportSettings
		OldGapSeconds *float64 `json:"gap_seconds"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*e = ExportSettings(v.exportSettings)
	if v.OldGapSeconds != nil && e.GapSeconds == 0 {
		e.GapSeconds = *v.OldGapSeconds
	}
	return nil
}
