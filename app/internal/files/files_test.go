package files

import "testing"

// DecodeStrict takes exactly one value, refuses unknown fields, and says a
// decoding error in jsonerr.Phrase's words.
func TestDecodeStrict(t *testing.T) {
	var v struct {
		Volume float64 `json:"volume"`
	}
	for _, c := range []struct{ in, want string }{
		{`{} {}`, "data after the JSON value"},
		{`{"colour": 1}`, `json: unknown field "colour"`},
		{`{"volume": "loud"}`, `field "volume" must be a number, got a string`},
		{`RIFF`, "not valid JSON (at byte 1)"},
	} {
		if err := DecodeStrict([]byte(c.in), &v); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	if err := DecodeStrict([]byte(`{"volume": 0.5}`), &v); err != nil || v.Volume != 0.5 {
		t.Errorf("a good value: %v, %v", v, err)
	}
}
