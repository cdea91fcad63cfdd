//go:build cuda

package cuda

import (
	"testing"
)

// TestCopyRows holds Queue.CopyRows (the prefill routing log's copy of the
// router's columns) to a plain loop: a column block of a row-major matrix
// into a tighter one, nothing of the destination's other bytes touched;
// and to its refusals (a row wider than a pitch, a block too small).
func TestCopyRows(t *testing.T) {
	const rows, cols, from, width, pitch = 5, 7, 2, 3, 4 // dst: width of each row at pitch
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(i) + 0.5
	}
	dst := make([]float32, rows*pitch)
	for i := range dst {
		dst[i] = -1
	}
	s, err := dev.Alloc(int64(len(src) * 4))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(s)
	d, err := dev.Alloc(int64(len(dst) * 4))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(d)
	if err := firstErr(Upload(dev, s, 0, src), Upload(dev, d, 0, dst)); err != nil {
		t.Fatal(err)
	}
	col := &Block{Kind: DeviceMem, Ptr: s.Ptr + from*4, Bytes: s.Bytes - from*4}
	if err := dev.Run(func(q *Queue) error { return q.CopyRows(d, col, rows, width*4, pitch*4, cols*4) }); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(dst))
	if err := Download(dev, got, d, 0); err != nil {
		t.Fatal(err)
	}
	for r := range rows {
		for c := range pitch {
			want := float32(-1)
			if c < width {
				want = src[r*cols+from+c]
			}
			if got[r*pitch+c] != want {
				t.Fatalf("row %d column %d: %g, want %g (%v)", r, c, got[r*pitch+c], want, got)
			}
		}
	}
	for _, bad := range []struct {
		name              string
		rows              int
		width, dstP, srcP int64
	}{
		{"a row wider than the destination's pitch", rows, 5 * 4, pitch * 4, cols * 4},
		{"more rows than the destination holds", rows + 1, width * 4, pitch * 4, cols * 4},
		{"no rows", 0, width * 4, pitch * 4, cols * 4},
	} {
		err := dev.Run(func(q *Queue) error { return q.CopyRows(d, col, bad.rows, bad.width, bad.dstP, bad.srcP) })
		if err == nil {
			t.Errorf("%s: copied", bad.name)
		}
	}
}
