package device

import "testing"

func TestChooseVariant(t *testing.T) {
	cases := []struct {
		major, minor int
		sm90a        bool
		want         string
		ok           bool
	}{
		{9, 0, true, "sm_90a", true},
		{9, 0, false, "sm_90 SASS", true},
		{8, 0, true, "sm_80 SASS", true},
		{8, 6, false, "sm_86 SASS", true},
		{8, 7, false, "sm_86 SASS", true},
		{8, 9, true, "sm_89 SASS", true},
		{10, 0, true, "compute_90 PTX (JIT by the driver)", true},
		{12, 0, false, "compute_90 PTX (JIT by the driver)", true},
		{7, 5, false, "", false},
	}
	for _, c := range cases {
		v, err := ChooseVariant(c.major, c.minor, c.sm90a)
		if (err == nil) != c.ok || v.Code != c.want || v.SM90a != (c.want == "sm_90a") {
			t.Errorf("ChooseVariant(%d.%d, sm90a=%v) = %+v, %v; want %q ok=%v", c.major, c.minor, c.sm90a, v, err, c.want, c.ok)
		}
	}
}
