// Package bpfmaps fills the service and backend maps that cnperf's eBPF
// load balancers share (bpfinclude/svc_maps.h), declaratively: a Sync writes
// every service's backends and removes the services that are gone. It also
// holds the helpers both need: the cgroup v2 mount, namespace switching.
package bpfmaps

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/svc"
)

// SvcKey mirrors struct svc_key: addresses and ports in network order.
type SvcKey struct {
	VIP   uint32
	Port  uint16
	Proto uint8
	Pad   uint8
}

// SvcVal mirrors struct svc_val.
type SvcVal struct {
	First uint32
	Count uint32
}

// Backend mirrors struct backend.
type Backend struct {
	IP   uint32
	Port uint16
	Pad  uint16
}

// MaxBackends is CNP_MAX_BACKENDS.
const MaxBackends = 262144

// IP4 is a as the kernel stores it (network order) read as a native integer.
func IP4(a [4]byte) uint32 { return binary.NativeEndian.Uint32(a[:]) }

// Port is p in network order, as a native integer.
func Port(p int) uint16 {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 { // little endian
		return bits.ReverseBytes16(uint16(p))
	}
	return uint16(p)
}

// Proto is the IP protocol number.
func Proto(s string) uint8 {
	if s == "udp" {
		return unix.IPPROTO_UDP
	}
	return unix.IPPROTO_TCP
}

// Key is a service's map key.
func Key(s svc.Service) SvcKey {
	return SvcKey{VIP: IP4(s.VIP.As4()), Port: Port(s.Port), Proto: Proto(s.Proto)}
}

// Fill makes the maps hold exactly services; prev is what the last Fill
// wrote, and the new set is returned. Backends are written before the
// services that point at them, so a connection never sees a half entry.
func Fill(servicesMap, backendsMap *ebpf.Map, services []svc.Service, prev map[SvcKey]bool) (map[SvcKey]bool, error) {
	total := 0
	for _, s := range services {
		total += len(s.Endpoints)
	}
	if total > MaxBackends {
		return prev, fmt.Errorf("%d endpoints; the eBPF load balancers hold at most %d", total, MaxBackends)
	}
	now := map[SvcKey]bool{}
	var idx uint32
	for _, s := range services {
		first := idx
		for _, e := range s.Endpoints {
			b := Backend{IP: IP4(e.IP.As4()), Port: Port(e.Port)}
			if err := backendsMap.Update(idx, b, ebpf.UpdateAny); err != nil {
				return prev, fmt.Errorf("writing backend %s: %w", e, err)
			}
			idx++
		}
		k := Key(s)
		if err := servicesMap.Update(k, SvcVal{First: first, Count: uint32(len(s.Endpoints))}, ebpf.UpdateAny); err != nil {
			return prev, fmt.Errorf("writing service %s: %w", s.FullName(), err)
		}
		now[k] = true
	}
	for k := range prev {
		if !now[k] {
			if err := servicesMap.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				return now, fmt.Errorf("removing a stale service: %w", err)
			}
		}
	}
	return now, nil
}

// Cgroup2Mount finds where the cgroup v2 hierarchy is mounted.
func Cgroup2Mount() (string, error) {
	if m := lab.Cgroup2Mount(); m != "" {
		return m, nil
	}
	return "", errors.New("no cgroup v2 mount; socket load balancing needs one (mount -t cgroup2 none /sys/fs/cgroup)")
}

// ProcCgroup is pid's cgroup v2 path ("/a/b"), relative to the mount.
func ProcCgroup(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("process %d has no cgroup v2 membership", pid)
}
