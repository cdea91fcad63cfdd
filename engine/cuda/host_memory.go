package cuda

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// This file reads how much host memory the machine can give a load now: the
// kernel's MemAvailable (free memory plus what it can reclaim without
// swapping), which a host tier's pinned experts are checked against.

// HostMemAvailable is /proc/meminfo's MemAvailable in bytes.
func HostMemAvailable() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("host memory: %w", err)
	}
	return parseMemAvailable(data)
}

// parseMemAvailable finds the "MemAvailable: N kB" line of a meminfo file.
func parseMemAvailable(data []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != "MemAvailable" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("host memory: MemAvailable line %q: want \"N kB\"", rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			return 0, fmt.Errorf("host memory: MemAvailable %q is not a size in kB", f[0])
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("host memory: reading meminfo: %w", err)
	}
	return 0, fmt.Errorf("host memory: meminfo has no MemAvailable line")
}
