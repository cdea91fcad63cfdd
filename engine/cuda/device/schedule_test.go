package device

import "testing"

func TestParseSyncMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want SyncMode
		ok   bool
	}{{"", SyncYield, true}, {"blocking", SyncBlocking, true}, {"spin", SyncSpin, true}, {"yield", SyncYield, true}, {"Spin", 0, false}, {"auto", 0, false}} {
		got, err := ParseSyncMode(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseSyncMode(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
