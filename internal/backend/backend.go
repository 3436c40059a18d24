// Package backend is the seam between what cnperf measures and where it
// runs. A Backend deploys a topology — hosts (nodes) and pods placed on
// them, each pod running a cnperf agent — and hands back a Deployment: per
// pod an agent client and the address a peer dials. The local lab of
// network namespaces is one backend (backend/labbackend); a Docker engine
// and a Kubernetes cluster sit beside it. Experiments, the scheduler and the
// measure path speak only this interface.
//
// What not every backend can do is an optional capability, a small
// interface a Deployment may implement: create pods on demand and time
// them (start-up), meter the machine's CPU, read interface counters, meter
// a network's daemons, program ClusterIP services.
package backend

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
)

// PodSpec places one pod (one agent) of a topology.
type PodSpec struct {
	Name string // "c1", "s1", "b2"...
	Host int    // 1-based host (node) index
	// With names another pod whose network namespace this one shares: a
	// second container in the same pod (same-pod placement).
	With string
	// CPU pins the pod's agent to one CPU; -1 leaves it free.
	CPU int
	// NoAgent asks for the pod without an agent where the backend gives
	// local namespaces (Pod.NetNS): the experiment opens the pod's
	// sockets itself, inside that namespace (all-to-all among hundreds
	// of pods, where an agent per pod would not fit in memory). A backend
	// without local namespaces starts the agent anyway.
	NoAgent bool
}

// Topology is what an experiment asks a backend for.
type Topology struct {
	Network string // the network the pods are on (a lab network mode...)
	Hosts   int    // at least this many hosts
	Pods    []PodSpec
	// OwnAddresses: every pod needs an address of its own, not its host's
	// (pods behind a ClusterIP service).
	OwnAddresses bool
	// Services: the nodes are made ready for a ClusterIP load balancer.
	Services bool
	// IdlePods are pods each host carries besides Pods, built by the
	// network like any pod but with no agent: a node's other pods.
	IdlePods int
	// PodsPerHost, when set, is how many pods a host may come to hold
	// (pods made on demand included): the backend sizes its pod subnets.
	PodsPerHost int
	// Tuning names a host-tuning profile (package tuning) applied inside
	// the deployment's namespaces once its pods are up; "" or "none" for
	// none. A backend that cannot apply it refuses the deployment.
	Tuning string
}

// Pod is a deployed pod with its agent.
type Pod struct {
	Name  string
	Host  int
	IP    netip.Addr // the address peers reach it at (may be the host's)
	Agent *agent.Client
	PID   int // the agent's pid, where the backend knows it (0 if not)
	// NetNS names the pod's network namespace where it is a local one.
	NetNS string
}

// Backend deploys topologies.
type Backend interface {
	Name() string
	// Check says whether this machine can deploy network, naming the fix.
	Check(network string) error
	// Allows says whether network can be deployed in placement p, and if
	// not, why.
	Allows(network string, p ground.Placement) (bool, string)
	// Placements lists the placements network can do, preferred first.
	Placements(network string) ([]ground.Placement, error)
	// Deploy builds topo; on error it leaves nothing behind.
	Deploy(ctx context.Context, topo Topology) (Deployment, error)
}

// Deployment is a built topology with its agents running.
type Deployment interface {
	// ID names the deployment (its lab, namespace, project...).
	ID() string
	Network() string
	Pod(name string) *Pod
	// Dial is the address a client in pod from dials to reach port on pod
	// to (for NAT, the host's address and a mapped port it programs).
	Dial(ctx context.Context, from, to, proto string, port int) (netip.AddrPort, error)
	// Params are what the deployment adds to every result's params
	// (underlay MTU, network options, pinning).
	Params() map[string]any
	// AgentLog is the end of a pod agent's log, for an error message.
	AgentLog(pod string) string
	// Environment adds what the deployment knows of its platform.
	Environment(ctx context.Context, env *result.Environment)
	// Teardown removes everything; it copes with a half-built deployment
	// and is harmless to call twice.
	Teardown() error
}

// Named is a deployment that names the backend it runs on, recorded in
// every result it measures (result.Backend); the local lab records none.
type Named interface {
	Backend() string
}

// ErrSkip marks a deployment this backend cannot make here or for this
// combination (a network without pod addresses for services, a load
// balancer the kernel lacks): the comparison goes on without it, the
// reason recorded. A cancelled context is never a skip.
var ErrSkip = errors.New("skipped")

type skipErr struct{ msg string }

func (e skipErr) Error() string        { return e.msg }
func (e skipErr) Is(target error) bool { return target == ErrSkip }

// Skip returns an error that is ErrSkip, with msg as its text.
func Skip(msg string) error { return skipErr{msg} }

// CPUMeter reads the CPU time of the machine the measured pods share.
type CPUMeter interface {
	MachineCPU(ctx context.Context) (ground.CPUTimes, error)
}

// RxCounter reads the received-bytes counter of the interface pod takes
// traffic from peer in on (loopback when they share a namespace).
type RxCounter interface {
	RxBytes(ctx context.Context, pod, peer string) (uint64, bool)
}

// SNMPReader reads a pod's kernel protocol counters (/proc/net/snmp of its
// network namespace) as "Proto:Name" -> value, e.g. "Tcp:RetransSegs".
type SNMPReader interface {
	SNMP(ctx context.Context, pod string) (map[string]int64, error)
}

// DaemonMeter reports the CPU seconds a network's own daemons (user-space
// tunnels, BGP speakers) have used so far; ok is false where it has none.
type DaemonMeter interface {
	DaemonCPUSeconds() (s float64, ok bool)
}

// Recorder is implemented by deployments that keep every command they ran
// to build themselves (the lab: each ip, iptables, bpftool... command, in
// order), so a result can be traced to how its network was made.
type Recorder interface {
	Commands() []string
}

// ServiceSet is a set of ClusterIP services programmed in a deployment.
type ServiceSet struct {
	Target netip.AddrPort // the measured service's address
	Path   string         // how to describe it in results
	Sync   time.Duration  // how long programming them took
	Count  int
}

// ServiceHost programs ClusterIP services in front of backend pods with a
// named load balancer; clean removes them.
type ServiceHost interface {
	ProgramServices(ctx context.Context, lb string, n int, udp bool, client string, backends []string) (ServiceSet, func() error, error)
}

// LBServer is a backend that says which --lb values its deployments
// serve: in a run on several backends (lab,kubernetes), a services unit is
// made only on the backends that serve its load balancer (the lab's
// replicas on the lab, the cluster's own proxy on the cluster).
type LBServer interface {
	ServesLB(lb string) bool
}

// SharedServices is a backend whose deployments all see one another's
// services: a cluster's proxy programs every Service of the cluster, so a
// deployment measuring 1 Service beside one holding 10,000 would measure
// 10,001. Its service counts are measured one after the other (in phases,
// sched.Unit.Phase), not live at once.
type SharedServices interface {
	SharedServices() bool
}

// StartupSample is one pod created on demand and timed.
type StartupSample struct {
	Total   time.Duration            // create to first reply (or to created, with no peer)
	Bare    time.Duration            // creating a pod with no network, the reference
	Phases  map[string]time.Duration // namespace, links, control_plane, first_packet...
	Path    string                   // the peer address probed
	NoPeer  bool
	Elapsed time.Duration
}

// PodStarter creates pods on demand on the host of pod near, times each to
// its first reply from peer ("" for none), as the start-up experiment needs.
type PodStarter interface {
	StartPod(ctx context.Context, near, peer, name string) (StartupSample, error)
	// SetupPhases are node-level phases the network went through once.
	SetupPhases() map[string]time.Duration
}

// CNIStarter is a PodStarter that can also have the real CNI plugin of
// the network (Debian's containernetworking-plugins) build the pod, timed
// the same way, to compare with: an error says when the network has none.
type CNIStarter interface {
	StartPodCNI(ctx context.Context, near, peer, name string) (StartupSample, error)
}

// Optioner is a backend that takes options of its own for a network,
// given like a network mode's (`--mode-opt key=value`): docker-lab's
// userland-proxy for nat and encrypt for its overlay. The runner checks
// them before anything is built.
type Optioner interface {
	// Options are the keys the backend takes for network.
	Options(network string) []option.Spec
	// CheckOptions says whether this machine can build network with the
	// options set (a kernel feature one needs), naming what is missing.
	CheckOptions(network string, set map[string]string) error
}
