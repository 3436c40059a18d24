package labbackend

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The readers of a process's /proc files the container backends meter
// their pods with (the lab reads its namespaces directly).

// SameNetNS: processes a and b share a network namespace.
func SameNetNS(a, b int) bool {
	x, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", a))
	y, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", b))
	return err1 == nil && err2 == nil && x == y
}

// ParseNetDev reads dev's received bytes from /proc/net/dev text.
func ParseNetDev(s, dev string) (uint64, bool) {
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != dev {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		return v, err == nil
	}
	return 0, false
}

// ProcCPUSeconds is a process's user+system CPU time (/proc/PID/stat).
func ProcCPUSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64) // utime, field 14
	k, _ := strconv.ParseFloat(f[12], 64) // stime, field 15
	return (u + k) / 100                  // USER_HZ
}
