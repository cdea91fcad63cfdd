package model

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
)

// hostTotal is this machine's physical memory in bytes (Linux
// /proc/meminfo MemTotal), 0 when it cannot be read. The memory bar of a
// model with no cap on the CPU backend is drawn against it.
var hostTotal = sync.OnceValue(func() int64 { return memTotalFrom("/proc/meminfo") })

func memTotalFrom(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<44 {
			return 0
		}
		return kb << 10
	}
	return 0
}
