package cuda

import "os"

// The step's residual-then-norm tails as thread block clusters (norm34, issue
// 27): add_rmsnorm_zc_cluster_fast and moe_combine_norm_cluster_fast spread
// a row's columns over a cluster of kernel.NormCluster blocks
// (kernels/row_norm.cuh ClusterSpan), one cluster a row, instead of one
// 1024-thread block a row: the row's loads on eight multiprocessors at once
// and its sum of squares one round through distributed shared memory.

// normCluster is $PROSCENIUM_GPU_NORM_CLUSTER: the cluster kernels wherever
// they can run (normClusterRows) unless it is "0", which keeps the one-block
// kernels. On since session 12's run 3: the step of B = 1 / 4 takes 2.132 /
// 3.555 → 2.055 / 3.509 ms (docs/PERF.md "norm34").
var normCluster = os.Getenv("PROSCENIUM_GPU_NORM_CLUSTER") != "0"

// normClusterMaxRows is the most rows a launch runs as clusters: the decode
// steps (one take, B-row steps of up to eight). A prefill pass's hundreds of
// rows keep the one-block kernels (a block a row fills the device there).
const normClusterMaxRows = 8

// normClusterRows reports whether a norm tail of n rows is one the cluster
// kernels take, given the switch, fast numerics and a device with thread
// block clusters (compute capability 9): exact keeps its kernels and bits.
func normClusterRows(n int, exact bool, major int) bool {
	return normCluster && n >= 1 && n <= normClusterMaxRows && !exact && major >= 9
}
