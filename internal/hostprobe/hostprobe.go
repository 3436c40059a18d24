// Package hostprobe reads what the kernel says about this machine and its
// processes: CPU time by kind (/proc/stat, the ksoftirqd threads), a
// process's CPU time and network namespace, interface and protocol
// counters. Every backend whose pods share this machine's kernel meters
// them with it; none borrows another backend's readers.
package hostprobe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/ground"
)

// MachineCPU reads this machine's CPU times: /proc/stat's, and the
// ksoftirqd threads' from their own stat files.
func MachineCPU() (ground.CPUTimes, error) {
	c, err := ReadProcStat("/proc/stat")
	if err != nil {
		return c, err
	}
	c.KSoftirqd = KSoftirqdSeconds("/proc")
	return c, nil
}

// KSoftirqdSeconds is the CPU time (user + system, seconds) the kernel's
// ksoftirqd/N threads have used, read from proc (a /proc mount); 0 when
// none is found.
func KSoftirqdSeconds(proc string) float64 {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0
	}
	var sum float64
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if v, ok := ksoftirqdTicks(string(b)); ok {
			sum += v / userHZ
		}
	}
	return sum
}

// ksoftirqdTicks reads utime + stime (clock ticks) from a /proc/PID/stat
// line when its command is ksoftirqd/N.
func ksoftirqdTicks(stat string) (float64, bool) {
	lo, hi := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if lo < 0 || hi < lo || !strings.HasPrefix(stat[lo+1:hi], "ksoftirqd/") {
		return 0, false
	}
	// after ") ": state(3) ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime(14) stime(15)
	f := strings.Fields(stat[hi+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	s, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return u + s, true
}

// ReadProcStat parses the aggregate "cpu" line of a /proc/stat file.
func ReadProcStat(path string) (ground.CPUTimes, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ground.CPUTimes{}, err
	}
	return ParseProcStat(string(b))
}

// userHZ is the unit of /proc/stat (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// ParseProcStat parses /proc/stat text.
func ParseProcStat(s string) (ground.CPUTimes, error) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "cpu" {
			continue
		}
		v := make([]float64, 8)
		for i := range v {
			n, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				return ground.CPUTimes{}, fmt.Errorf("/proc/stat: %q: %w", line, err)
			}
			v[i] = n / userHZ
		}
		return ground.CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
	}
	return ground.CPUTimes{}, errors.New("/proc/stat: no cpu line")
}

// ParseSNMP parses /proc/net/snmp: pairs of lines, names then values.
func ParseSNMP(s string) map[string]int64 {
	out := map[string]int64{}
	lines := strings.Split(s, "\n")
	for i := 0; i+1 < len(lines); i++ {
		h, v := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(h) < 2 || len(h) != len(v) || h[0] != v[0] {
			continue
		}
		proto := strings.TrimSuffix(h[0], ":")
		for j := 1; j < len(h); j++ {
			if n, err := strconv.ParseInt(v[j], 10, 64); err == nil {
				out[proto+":"+h[j]] = n
			}
		}
		i++
	}
	return out
}

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

// RxBytes is the received-bytes counter of interface dev in process pid's
// network namespace (/proc/PID/net/dev), or of its loopback when peer
// shares that namespace: the counter a pod receives a peer's traffic on.
func RxBytes(pid, peer int, dev string) (uint64, bool) {
	if SameNetNS(pid, peer) {
		dev = "lo"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/dev", pid))
	if err != nil {
		return 0, false
	}
	return ParseNetDev(string(b), dev)
}

// SNMP is the kernel's protocol counters of process pid's network
// namespace (/proc/PID/net/snmp) as "Proto:Name" -> value.
func SNMP(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/snmp", pid))
	if err != nil {
		return nil, err
	}
	return ParseSNMP(string(b)), nil
}
