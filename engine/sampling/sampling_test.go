package sampling

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Every refusal is an *Error naming its field, the message starting with
// it: the speech API reports the field as its param. Broken once: a
// temperature of 101 passed before MaxTemperature.
func TestErrorNamesTheField(t *testing.T) {
	for _, c := range []struct {
		s    Settings
		want string
	}{
		{Settings{Temperature: 101, TopP: 1}, "temperature"},
		{Settings{Temperature: float32(math.Inf(1)), TopP: 1}, "temperature"},
		{Settings{Temperature: float32(math.NaN()), TopP: 1}, "temperature"},
		{Settings{Temperature: 1, TopP: float32(math.NaN())}, "top_p"},
		{Settings{Temperature: 1, TopP: 1, TopK: -1}, "top_k"},
	} {
		err := c.s.Validate()
		if FieldOf(err) != c.want || !strings.HasPrefix(err.Error(), c.want+" ") {
			t.Errorf("%+v: %v (field %q), want one naming %s", c.s, err, FieldOf(err), c.want)
		}
	}
	if err := (Settings{Temperature: MaxTemperature, TopP: 1}).Validate(); err != nil {
		t.Errorf("temperature %d: %v", MaxTemperature, err)
	}
	if FieldOf(errors.New("other")) != "" {
		t.Error("FieldOf of another error")
	}
}
