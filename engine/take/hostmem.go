package take

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"proscenium/engine/api"
)

// HostMemory reads the process's resident set (VmRSS) and its peak (VmHWM)
// from /proc/self/status: the CPU backend's weights, caches and scratch live
// in it. Where that file does not exist (not Linux) it reports the Go
// runtime's memory obtained from the OS, with no peak.
func HostMemory() api.Memory {
	m := api.Memory{Device: "host"}
	data, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				continue
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "VmRSS":
				m.Used = n << 10
			case "VmHWM":
				m.Peak = n << 10
			}
		}
		if m.Used > 0 {
			return m
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.Used = int64(ms.Sys)
	return m
}
