// Package ground holds the few words every layer of cnperf shares about a
// deployment, from the network modes and the host readers at the bottom
// to the plan and the commands at the top: where a client runs relative
// to its server (Placement) and what a machine's CPUs did (CPUTimes).
// They live here, at the ground, so that a lower package never imports a
// higher one to name them (netmode and hostprobe once reached up into
// backend for them). It imports nothing of cnperf but registry.
package ground

import (
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/registry"
)

// Placement says where the client runs relative to the server.
type Placement string

// The placements.
const (
	SamePod   Placement = "same-pod"   // two containers sharing one pod's namespace
	SameHost  Placement = "same-host"  // two pods on one host
	CrossHost Placement = "cross-host" // pods on two hosts
)

// AllPlacements in display order.
var AllPlacements = []Placement{SamePod, SameHost, CrossHost}

// placementAliases are Kubernetes' words for the placements: a node is a host.
var placementAliases = map[string]Placement{"same-node": SameHost, "cross-node": CrossHost}

// ParsePlacement validates a placement name (same-node and cross-node are
// same-host and cross-host).
func ParsePlacement(s string) (Placement, error) {
	if p, ok := placementAliases[s]; ok {
		return p, nil
	}
	for _, p := range AllPlacements {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown placement %q;%s use one of %s", s, registry.Suggest(s, placementNames()), JoinPlacements(AllPlacements))
}

// JoinPlacements lists placements, comma-separated.
func JoinPlacements(ps []Placement) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// placementNames are the placements' names, for a misspelt one.
func placementNames() []string {
	var n []string
	for _, p := range AllPlacements {
		n = append(n, string(p))
	}
	return n
}

// CPUTimes is a machine's cumulative CPU time by kind, in seconds.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
	// KSoftirqd is the CPU time of the kernel's ksoftirqd threads (part
	// of the above): the softirq work the kernel deferred out of the
	// context that raised it, which no agent's rusage counts.
	KSoftirqd float64
}

// Busy is the time spent not idle.
func (c CPUTimes) Busy() float64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
}

// Sub is c - o.
func (c CPUTimes) Sub(o CPUTimes) CPUTimes {
	return CPUTimes{c.User - o.User, c.Nice - o.Nice, c.System - o.System, c.Idle - o.Idle,
		c.IOWait - o.IOWait, c.IRQ - o.IRQ, c.SoftIRQ - o.SoftIRQ, c.Steal - o.Steal, c.KSoftirqd - o.KSoftirqd}
}
