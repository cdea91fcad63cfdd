//go:build cuda

package device

import "gorgonia.org/cu"

// Time returns the device time in milliseconds of the work enqueue puts on
// the stream, measured with events recorded before and after it. It runs on
// the device thread: enqueue must not call Device methods (use q).
func (d *Device) Time(enqueue func(q *Queue) error) (float64, error) {
	var ms float64
	err := d.Run(func(q *Queue) error {
		start, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		defer cu.DestroyEvent(&start)
		stop, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		defer cu.DestroyEvent(&stop)
		if err := start.Record(d.stream); err != nil {
			return err
		}
		if err := enqueue(q); err != nil {
			return err
		}
		if err := stop.Record(d.stream); err != nil {
			return err
		}
		if err := stop.Synchronize(); err != nil {
			return err
		}
		ms, err = start.Elapsed(stop)
		return err
	})
	return ms, err
}
