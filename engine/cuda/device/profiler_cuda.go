//go:build cuda

package device

/*
#include <cuda.h>
#include <cudaProfiler.h>
*/
import "C"

// ProfileRange brackets f with cuProfilerStart and cuProfilerStop, so a
// profiler started with profiling off at the start (ncu
// --profile-from-start off) records only the work f enqueues. The range
// ends after the stream's work is done.
func (d *Device) ProfileRange(f func(q *Queue) error) error {
	return d.Do(func() error {
		if err := check("cuProfilerStart", C.cuProfilerStart()); err != nil {
			return err
		}
		err := f(&Queue{d})
		if serr := d.stream.Synchronize(); err == nil {
			err = serr
		}
		if perr := check("cuProfilerStop", C.cuProfilerStop()); err == nil {
			err = perr
		}
		return err
	})
}
