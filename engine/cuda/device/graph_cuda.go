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
