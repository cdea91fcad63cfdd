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
	graph   C.CUgraph
	exec    C.CUgraphExec
	kernels int
}

// Kernels is the kernel launches the graph replays (its kernel nodes, counted
// at capture): a decode step's or a frame's launches.
func (g *Graph) Kernels() int { return g.kernels }

// countKernels counts the kernel nodes of a captured graph.
func countKernels(g C.CUgraph) (int, error) {
	var n C.size_t
	if err := check("graph nodes", C.cuGraphGetNodes(g, nil, &n)); err != nil || n == 0 {
		return 0, err
	}
	nodes := make([]C.CUgraphNode, n)
	if err := check("graph nodes", C.cuGraphGetNodes(g, &nodes[0], &n)); err != nil {
		return 0, err
	}
	k := 0
	for _, node := range nodes[:n] {
		var t C.CUgraphNodeType
		if err := check("graph node type", C.cuGraphNodeGetType(node, &t)); err != nil {
			return 0, err
		}
		if t == C.CU_GRAPH_NODE_TYPE_KERNEL {
			k++
		}
	}
	return k, nil
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
	k, err := countKernels(g.graph)
	if err != nil {
		C.cuGraphDestroy(g.graph)
		return nil, err
	}
	g.kernels = k
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

// TimeChains returns the device time in milliseconds of chains run side by
// side: chain i's graphs replayed in order, times times, on a stream of its
// own, every chain starting together after the work already on the device's
// stream (Time measures from there until the last chain ends). It measures
// whether independent launch chains overlap on the GPU (several groups of
// takes stepping at once) against the same chains run one after another on
// one stream (TimeChains with one chain of them all).
func (d *Device) TimeChains(chains [][]*Graph, times int) (float64, error) {
	streams := make([]cu.Stream, len(chains))
	events := make([]cu.Event, 1+len(chains)) // the fork, then each chain's end
	defer d.Do(func() error {
		for i := range streams {
			if streams[i] != (cu.Stream{}) {
				streams[i].Synchronize()
				streams[i].Destroy()
			}
		}
		for i := range events {
			if events[i] != (cu.Event{}) {
				cu.DestroyEvent(&events[i])
			}
		}
		return nil
	})
	ms, err := d.Time(func(*Queue) error {
		var err error
		for i := range events {
			if events[i], err = cu.MakeEvent(cu.DisableTiming); err != nil {
				return err
			}
		}
		for i := range streams {
			if streams[i], err = cu.MakeStream(cu.NonBlocking); err != nil {
				return err
			}
		}
		fork, done := events[0], events[1:]
		if err := fork.Record(d.stream); err != nil {
			return err
		}
		for i, chain := range chains {
			s := streams[i]
			if err := s.Wait(fork, 0); err != nil {
				return err
			}
			for range times {
				for _, g := range chain {
					if err := check("graph launch", C.cuGraphLaunch(g.exec, cuStream(s))); err != nil {
						return err
					}
				}
			}
			if err := done[i].Record(s); err != nil {
				return err
			}
			if err := d.stream.Wait(done[i], 0); err != nil {
				return err
			}
		}
		return nil
	})
	return ms / float64(times), err
}
