// Package pmqos holds a CPU wake-up latency request (PM QoS) for the length
// of a run, as tuned's network-latency profile does: while the request is
// held, idle CPUs stay in shallow states, so a message that arrives on an
// idle CPU is not delayed by a deep-sleep exit. The request belongs to the
// open file; the kernel drops it when the file is closed, including when
// the process is killed, so nothing outlives the run.
package pmqos

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Path is the kernel's CPU latency QoS device.
const Path = "/dev/cpu_dma_latency"

// Hold requests a CPU wake-up latency of at most us microseconds until the
// returned release func is called (or the process exits).
func Hold(us int) (release func(), err error) {
	if us < 0 || us > 2000000 {
		return nil, fmt.Errorf("cpu latency %d µs out of range; use 0 (shallowest idle) to 2000000", us)
	}
	f, err := os.OpenFile(Path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("holding a CPU latency request needs %s (root, CONFIG_CPU_IDLE): %w", Path, err)
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(int32(us)))
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", Path, err)
	}
	return func() { f.Close() }, nil
}

// Current reads the latency bound in force now (µs), -1 if unreadable.
func Current() int {
	f, err := os.Open(Path)
	if err != nil {
		return -1
	}
	defer f.Close()
	var b [4]byte
	if n, err := f.Read(b[:]); err != nil || n != 4 {
		return -1
	}
	return int(int32(binary.NativeEndian.Uint32(b[:])))
}

// HoldSpec applies --cpu-latency: "off" holds nothing, "auto" holds
// 0 µs where the kernel offers /dev/cpu_dma_latency (a note on log where it
// does not), a number holds that bound or fails. It returns the release
// func and the bound held (nil when none), as recorded in
// environment.cpu_latency_us.
func HoldSpec(spec string, log io.Writer) (release func(), held *int, err error) {
	nop := func() {}
	switch spec {
	case "off":
		return nop, nil, nil
	case "auto", "":
		rel, err := Hold(0)
		if err != nil {
			if log != nil {
				fmt.Fprintf(log, "note: no CPU latency bound held (%v); round trips include idle-state exits\n", err)
			}
			return nop, nil, nil
		}
		zero := 0
		return rel, &zero, nil
	}
	us, err := strconv.Atoi(spec)
	if err := CheckSpec(spec); err != nil {
		return nop, nil, err
	}
	rel, err := Hold(us)
	if err != nil {
		return nop, nil, err
	}
	return rel, &us, nil
}

// CheckSpec refuses a --cpu-latency value HoldSpec would refuse, before
// anything is held: microseconds, off or auto.
func CheckSpec(spec string) error {
	if spec == "off" || spec == "auto" || spec == "" {
		return nil
	}
	if us, err := strconv.Atoi(spec); err != nil || us < 0 {
		return fmt.Errorf("--cpu-latency %q: want microseconds, off or auto", spec)
	}
	return nil
}
