//go:build cuda

package device

// #include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// Graph is a captured sequence of launches, replayed with one call: the
// launch gaps of many small kernels shrink to the device's own (cuGraphLaunch).
// gorgonia.org/cu binds no stream capture, so this file calls the driver.
type Graph struct {
	graph C.CUgraph
	exec  C.CUgraphExec
}

func cuStream(s cu.Stream) C.CUstream {
	cs := s.C()
	return *(*C.CUstream)(unsafe.Pointer(&cs))
}

func check(what string, r C.CUresult) error {
	if r != C.CUDA_SUCCESS {
		var s *C.char
		C.cuGetErrorName(r, &s)
		name := "unknown"
		if s != nil {
			name = C.GoString(s)
		}
		return fmt.Errorf("cuda: %s: %s (%d)", what, name, int(r))
	}
	return nil
}

// Capture records what enqueue puts on the stream (nothing runs) and
// instantiates it as a graph.
func (q *Queue) Capture(enqueue func(q *Queue) error) (*Graph, error) {
	s := cuStream(q.d.stream)
	if err := check("begin capture", C.cuStreamBeginCapture(s, C.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)); err != nil {
		return nil, err
	}
	werr := enqueue(q)
	var g Graph
	if err := check("end capture", C.cuStreamEndCapture(s, &g.graph)); err != nil {
		return nil, FirstErr(werr, err)
	}
	if werr != nil {
		C.cuGraphDestroy(g.graph)
		return nil, werr
	}
	if err := check("instantiate graph", C.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0)); err != nil {
		C.cuGraphDestroy(g.graph)
		return nil, err
	}
	return &g, nil
}

// Launch enqueues one replay of the graph.
func (q *Queue) LaunchGraph(g *Graph) error {
	return check("graph launch", C.cuGraphLaunch(g.exec, cuStream(q.d.stream)))
}

// Destroy frees the graph; call it on the device thread (inside Run).
func (g *Graph) Destroy() {
	C.cuGraphExecDestroy(g.exec)
	C.cuGraphDestroy(g.graph)
}
