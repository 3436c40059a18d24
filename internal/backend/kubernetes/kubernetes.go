// Package kubernetes is the Kubernetes backend: the pods of a topology are
// pods on a real cluster, reached through the API server the kubeconfig
// names (client-go). Each deployment gets a namespace of its own, labelled
// cnperf.run=<run id>; every agent pod is pinned to a node (spec.nodeName):
// host 1 of a topology is the first schedulable node, host 2 the second,
// so same-host is same-node and cross-host is cross-node. The networks:
//
//   - pod: the cluster's own pod network, whatever CNI it runs;
//   - baseline and host: hostNetwork: true pods, the node's own stack (the
//     reference row every figure keeps its ratio to).
//
// ClusterIP services (--lb cluster) are real Services in front of the
// backend pods, served by whatever the cluster runs (kube-proxy in its
// mode, or an eBPF replacement).
//
// The coordinator drives each agent through the API server: the agent
// listens on 127.0.0.1 inside its pod, and the coordinator reaches it by
// port-forward (pods/portforward), so the control channel works from
// outside the cluster network and never crosses the measured path.
//
// Teardown deletes the namespace and waits until it is gone; Clean removes
// the namespaces of dead runs, found by label.
package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
)

// Name is the backend's name.
const Name = "kubernetes"

// The labels and annotations on what the backend creates.
const (
	LabelRun     = "cnperf.run"     // the run id, on namespaces, pods and services
	LabelDeploy  = "cnperf.deploy"  // the deployment id (run id, or run id + "s2"...)
	LabelPod     = "cnperf.pod"     // the topology's pod name
	LabelBackend = "cnperf.backend" // "1" on the backend pods of the services
	AnnotPID     = "cnperf.pid"     // the coordinator's pid, to tell a dead run
	AnnotHost    = "cnperf.host"    // the coordinator's hostname
)

// DefaultPrefix starts every namespace's name.
const DefaultPrefix = "cnperf"

// DefaultNetwork is the network a run measures when none is named.
const DefaultNetwork = "pod"

// AgentPath is where the agent image holds the cnperf binary.
const AgentPath = "/cnperf"

// PodDeadline bounds every agent pod's life (activeDeadlineSeconds): a
// coordinator killed with -9 leaves idle pods for at most this long, or
// until `cnperf clean --backend kubernetes`.
const PodDeadline = 12 * time.Hour

// Options are the --backend kubernetes flags.
type Options struct {
	Kubeconfig string // "" = $KUBECONFIG or ~/.kube/config
	Context    string // "" = the kubeconfig's current context
	Prefix     string // namespace prefix; "" = DefaultPrefix
	Image      string // the agent image: a static cnperf at /cnperf
	// PullSecret is --image-pull-secret: [NAMESPACE/]NAME of a Secret of
	// type kubernetes.io/dockerconfigjson (by default in the kubeconfig
	// context's namespace), copied into each deployment's namespace for
	// the nodes to pull --image with.
	PullSecret string
	Placement  Placement // which nodes the agents run on
}

// pullSecret splits PullSecret into its namespace ("" = the context's)
// and name.
func (o Options) pullSecret() (ns, name string) {
	if a, b, ok := strings.Cut(o.PullSecret, "/"); ok {
		return a, b
	}
	return "", o.PullSecret
}

var dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
var dnsSubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

var prefixRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,28}[a-z0-9])?$`)

// Validate checks the options before anything contacts the cluster.
func (o Options) Validate() error {
	if strings.TrimSpace(o.Image) == "" {
		return errors.New("--backend kubernetes needs --image: the agent image the nodes run (a static cnperf at /cnperf, see docs/kubernetes.md)")
	}
	if strings.ContainsAny(o.Image, " \t\n") {
		return fmt.Errorf("--image %q: an image reference has no spaces", o.Image)
	}
	if o.PullSecret != "" {
		ns, name := o.pullSecret()
		if !dnsSubdomainRE.MatchString(name) || strings.Contains(o.PullSecret, "/") && !dnsLabelRE.MatchString(ns) {
			return fmt.Errorf("--image-pull-secret %q: use NAME or NAMESPACE/NAME of a Secret (lower-case letters, digits, '-' and '.')", o.PullSecret)
		}
	}
	if o.Prefix != "" && !prefixRE.MatchString(o.Prefix) {
		return fmt.Errorf("--namespace-prefix %q: use up to 30 lower-case letters, digits and '-', starting with a letter", o.Prefix)
	}
	return nil
}

func (o Options) prefix() string {
	if o.Prefix == "" {
		return DefaultPrefix
	}
	return o.Prefix
}

// netKind is how a network of cnperf maps onto a cluster.
type netKind struct {
	hostNetwork bool
	placements  []ground.Placement
	summary     string
}

var kinds = map[string]netKind{
	"pod":      {placements: []ground.Placement{ground.CrossHost, ground.SameHost, ground.SamePod}, summary: "the cluster's pod network (its CNI), pods pinned to nodes"},
	"host":     {hostNetwork: true, placements: []ground.Placement{ground.CrossHost, ground.SameHost}, summary: "hostNetwork: true pods: the node's own network namespace"},
	"baseline": {hostNetwork: true, placements: []ground.Placement{ground.CrossHost, ground.SameHost}, summary: "no pod networking (hostNetwork: true pods)"},
}

// Networks lists the networks the backend deploys.
func Networks() []string {
	out := make([]string, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func unknownNetwork(n string) error {
	return fmt.Errorf("the kubernetes backend has no network %q; use one of %s", n, strings.Join(Networks(), ", "))
}

// Backend deploys topologies on a cluster.
type Backend struct {
	Opts  Options
	RunID string // "" = a new id
	Log   func(format string, args ...any)
	// Connect makes the clients; nil connects as Opts say. Tests set it.
	Connect func(ctx context.Context) (*Clients, error)
	// Wait bounds how long pods may take to run and answer (default 3 min).
	Wait time.Duration

	poll  time.Duration // how often pods are looked at (default 250 ms)
	probe func(ctx context.Context, d *Deployment, client string, backends []string, set *backend.ServiceSet) error
	pid   int    // the coordinator's pid, on the namespace (tests fix it)
	host  string // and its hostname

	mu     sync.Mutex
	seq    int
	cl     *Clients
	clErr  error
	access error
	nodes  []string
}

// New makes a Kubernetes backend.
func New(opts Options, runID string, logf func(string, ...any)) *Backend {
	return &Backend{Opts: opts, RunID: runID, Log: logf}
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return Name }

func (b *Backend) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

// clients connects once (the error too is kept: a cluster that did not
// answer is not asked again for every unit).
func (b *Backend) clients(ctx context.Context) (*Clients, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cl != nil || b.clErr != nil {
		return b.cl, b.clErr
	}
	if err := b.Opts.Validate(); err != nil {
		b.clErr = err
		return nil, err
	}
	connect := b.Connect
	if connect == nil {
		connect = func(ctx context.Context) (*Clients, error) { return Connect(ctx, b.Opts) }
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cl, err := connect(cctx)
	if err == nil {
		err = cl.Reachable(cctx)
	}
	if err == nil {
		err = cl.CheckAccess(cctx, b.pullSecretAccess(cl)...)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // an interrupt is not kept
		}
		b.clErr = err
		return nil, err
	}
	b.cl = cl
	return cl, nil
}

// Check implements backend.Backend: the network is one of the backend's,
// the options are complete, the API server answers and lets the
// kubeconfig's user do what a run does.
func (b *Backend) Check(network string) error {
	if _, ok := kinds[network]; !ok {
		return unknownNetwork(network)
	}
	_, err := b.clients(context.Background())
	return err
}

// Allows implements backend.Backend. Whether the cluster has the nodes a
// placement needs is known only once it is asked (Deploy says so, before
// creating anything).
func (b *Backend) Allows(network string, p ground.Placement) (bool, string) {
	k, ok := kinds[network]
	if !ok {
		return false, unknownNetwork(network).Error()
	}
	for _, q := range k.placements {
		if q == p {
			return true, ""
		}
	}
	return false, fmt.Sprintf("on kubernetes, %s runs %s; use one of them with --placement", network, ground.JoinPlacements(k.placements))
}

// Placements implements backend.Backend.
func (b *Backend) Placements(network string) ([]ground.Placement, error) {
	k, ok := kinds[network]
	if !ok {
		return nil, unknownNetwork(network)
	}
	return k.placements, nil
}

// runID is the id every namespace of this backend is labelled with.
func (b *Backend) runID() string {
	if b.RunID == "" {
		b.RunID = lab.NewID()
	}
	return b.RunID
}

// nextID names the next deployment: the run id, then the run id + "s2"...;
// seq is its number.
func (b *Backend) nextID() (run, id string, seq int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	run = b.runID()
	b.seq++
	if b.seq == 1 {
		return run, run, 1
	}
	return run, run + "s" + strconv.Itoa(b.seq), b.seq
}

// ctlBase is the first control port of deployment seq of run: agents of
// hostNetwork pods share their node's namespace with other runs' and with
// this run's other deployments, so each deployment gets its own block of
// 100 ports in 20000-59999, picked by the run id.
func ctlBase(run string, seq int) int {
	h := fnv.New32a()
	h.Write([]byte(run))
	return 20000 + 100*int((h.Sum32()+uint32(seq-1))%400)
}
