package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/result"
)

// MaxPods bounds a topology: each deployment has a block of 100 control ports.
const MaxPods = 99

// Deployment is a topology deployed as pods in one namespace.
type Deployment struct {
	backend.Base[*pod]
	b       *Backend
	cl      *Clients
	id, run string
	ns      string
	kind    netKind
	image   string
	nodes   map[int]string // host index -> node name
	where   map[string]nodeWhere
	order   []string
	kpods   []*kpod
	Ready   time.Duration

	mu       sync.Mutex
	tunnels  []Tunnel
	services int // Services created in the namespace (ProgramServices)
}

// nodeWhere is a chosen node's zone and instance type (its well-known
// labels; "" where it has none).
type nodeWhere struct{ zone, instanceType string }

// pod is one agent: a pod of its own, or a second container in another's
// (same-pod placement).
type pod struct {
	backend.Pod
	spec backend.PodSpec
	kp   *kpod
	port int // the agent's control port on 127.0.0.1 in the pod
}

// kpod is one Kubernetes pod and the agents (containers) in it.
type kpod struct {
	name, node string
	agents     []*pod
}

// Deploy implements backend.Backend: a labelled namespace, one pod per
// agent (pinned to its node), each agent reached by port-forward. On error
// the namespace is deleted again, whatever was created in it.
func (b *Backend) Deploy(ctx context.Context, topo backend.Topology) (_ backend.Deployment, err error) {
	k, ok := kinds[topo.Network]
	if !ok {
		return nil, unknownNetwork(topo.Network)
	}
	if k.hostNetwork && topo.OwnAddresses {
		return nil, backend.Skip(topo.Network + " pods share their node's address: services need a pod network (use --networks pod)")
	}
	if len(topo.Pods) > MaxPods {
		return nil, fmt.Errorf("%d pods in one deployment; the kubernetes backend takes up to %d", len(topo.Pods), MaxPods)
	}
	for _, ps := range topo.Pods {
		if ps.CPU >= 0 {
			return nil, errors.New("--pin: the kubernetes backend cannot pin agents to CPUs (that is the kubelet's CPU manager's); drop --pin")
		}
	}
	cl, err := b.clients(ctx)
	if err != nil {
		return nil, err
	}
	nl, err := cl.Core.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, cl.explain(err, "list nodes")
	}
	hosts, err := b.Opts.Placement.choose(topo, nl.Items)
	if err != nil {
		return nil, err
	}
	nodeByName := map[string]*corev1.Node{}
	for i := range nl.Items {
		nodeByName[nl.Items[i].Name] = &nl.Items[i]
	}
	run, id, seq := b.nextID()
	d := &Deployment{
		Base: backend.NewBase[*pod](Name, id, topo.Network),
		b:    b, cl: cl, id: id, run: run, ns: b.Opts.prefix() + "-" + id, kind: k,
		image: b.Opts.Image, nodes: hosts, where: map[string]nodeWhere{},
	}
	for _, n := range hosts {
		if kn := nodeByName[n]; kn != nil {
			d.where[n] = nodeWhere{zone: zoneOf(kn), instanceType: instanceTypeOf(kn)}
		}
	}
	// group the agents into pods: one sharing another's namespace is a
	// second container in its pod
	byName := map[string]*kpod{}
	base := ctlBase(run, seq)
	for i, ps := range topo.Pods {
		p := &pod{spec: ps, port: base + i, Pod: backend.Pod{Name: ps.Name, Host: ps.Host}}
		if ps.With != "" {
			host := byName[ps.With]
			if host == nil {
				return nil, fmt.Errorf("pod %s shares with %s, which comes later or not at all", ps.Name, ps.With)
			}
			p.kp = host
			p.Host = host.agents[0].Host
		} else {
			p.kp = &kpod{name: ps.Name, node: hosts[ps.Host]}
			d.kpods = append(d.kpods, p.kp)
		}
		p.kp.agents = append(p.kp.agents, p)
		byName[ps.Name] = p.kp
		d.Pods[ps.Name] = p
		d.order = append(d.order, ps.Name)
	}

	b.logf("building %s on kubernetes (namespace %s, nodes %s)", topo.Network, d.ns, d.nodeList())
	t0 := time.Now()
	if _, err := cl.Core.Namespaces().Create(ctx, d.namespaceObject(), metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("namespace %s exists already (a run with this id?); remove it with cnperf clean --backend kubernetes --id %s", d.ns, run)
		}
		return nil, cl.explain(err, "create namespace "+d.ns)
	}
	defer func() {
		if err != nil {
			if terr := d.Teardown(); terr != nil {
				err = fmt.Errorf("%w (and removing it: %v)", err, terr)
			}
		}
	}()
	if err := d.copyPullSecret(ctx); err != nil {
		return nil, err
	}
	for _, kp := range d.kpods {
		if err := d.createPod(ctx, kp); err != nil {
			return nil, err
		}
	}
	if err := d.waitRunning(ctx); err != nil {
		return nil, err
	}
	if err := d.connectAgents(ctx); err != nil {
		return nil, err
	}
	d.Ready = time.Since(t0)
	b.logf("  %s ready in %v", topo.Network, d.Ready.Round(time.Millisecond))
	return d, nil
}

// createPod creates kp's pod. A namespace just made has no default
// ServiceAccount until the controller manager adds it, and the
// ServiceAccount admission refuses pods until then: that refusal is waited
// out (for the deployment's wait limit), any other is an error.
func (d *Deployment) createPod(ctx context.Context, kp *kpod) error {
	deadline := time.Now().Add(d.b.waitLimit())
	for {
		_, err := d.cl.Core.Pods(d.ns).Create(ctx, d.podObject(kp), metav1.CreateOptions{})
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "error looking up service account") || time.Now().After(deadline) {
			return d.cl.explain(err, "create pod "+kp.name+" in "+d.ns)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(4 * d.b.pollEvery()):
		}
	}
}

func (d *Deployment) nodeList() string {
	var hs []int
	for h := range d.nodes {
		hs = append(hs, h)
	}
	sort.Ints(hs)
	var s []string
	for _, h := range hs {
		n := d.nodes[h]
		w := d.where[n]
		if w.zone != "" || w.instanceType != "" {
			n += " (" + strings.Trim(w.zone+", "+w.instanceType, ", ") + ")"
		}
		if !slices.Contains(s, n) {
			s = append(s, n)
		}
	}
	return strings.Join(s, ",")
}

func (d *Deployment) labels() map[string]string {
	return map[string]string{LabelRun: d.run, LabelDeploy: d.id}
}

func (d *Deployment) namespaceObject() *corev1.Namespace {
	l := d.labels()
	// hostNetwork pods are refused under the baseline and restricted Pod
	// Security levels
	l["pod-security.kubernetes.io/enforce"] = "privileged"
	pid, host := d.b.pid, d.b.host
	if pid == 0 {
		pid = os.Getpid()
	}
	if host == "" {
		host, _ = os.Hostname()
	}
	return &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{
			Name: d.ns, Labels: l,
			Annotations: map[string]string{AnnotPID: strconv.Itoa(pid), AnnotHost: host},
		},
	}
}

func (d *Deployment) podObject(kp *kpod) *corev1.Pod {
	l := d.labels()
	l[LabelPod] = kp.name
	grace, deadline := int64(1), int64(PodDeadline/time.Second)
	no := false
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: kp.name, Namespace: d.ns, Labels: l},
		Spec: corev1.PodSpec{
			NodeName:                      kp.node,
			HostNetwork:                   d.kind.hostNetwork,
			RestartPolicy:                 corev1.RestartPolicyNever,
			DNSPolicy:                     corev1.DNSDefault,
			TerminationGracePeriodSeconds: &grace,
			ActiveDeadlineSeconds:         &deadline,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no, // thousands of services would be thousands of variables
			Tolerations:                   d.b.Opts.Placement.Tolerations,
		},
	}
	if d.b.Opts.PullSecret != "" {
		_, name := d.b.Opts.pullSecret()
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: name}}
	}
	for _, a := range kp.agents {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name:            a.Name,
			Image:           d.image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{AgentPath, "agent", "--listen", "tcp:127.0.0.1:" + strconv.Itoa(a.port)},
		})
	}
	return p
}

// pullReasons are the waiting reasons of a container whose image the node
// cannot get; runReasons those of one it cannot start.
var (
	pullReasons = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
		"ErrImageNeverPull": true, "ImageInspectError": true, "RegistryUnavailable": true, "SignatureValidationFailed": true}
	runReasons = map[string]bool{"CreateContainerError": true, "CreateContainerConfigError": true,
		"RunContainerError": true, "CrashLoopBackOff": true, "StartError": true, "ContainerCannotRun": true}
)

// problem says why pod p will never run its agents, or nil.
func (d *Deployment) problem(p *corev1.Pod) error {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			if pullReasons[w.Reason] {
				return fmt.Errorf("node %s cannot pull --image %s (%s: %s); push it where the nodes pull from, or import it into each node's runtime (docs/kubernetes.md)",
					p.Spec.NodeName, d.image, w.Reason, clip(w.Message))
			}
			if runReasons[w.Reason] {
				return fmt.Errorf("node %s cannot run --image %s (%s: %s); the image must hold a static cnperf at %s (docs/kubernetes.md)",
					p.Spec.NodeName, d.image, w.Reason, clip(w.Message), AgentPath)
			}
		}
		if t := cs.State.Terminated; t != nil && (runReasons[t.Reason] || t.Reason == "ContainerCannotRun") {
			// never started (restartPolicy Never: no CrashLoopBackOff, the
			// container ends StartError, as containerd reports a missing
			// /cnperf)
			return fmt.Errorf("node %s cannot run --image %s (%s: %s); the image must hold a static cnperf at %s (docs/kubernetes.md)",
				p.Spec.NodeName, d.image, t.Reason, clip(t.Message), AgentPath)
		}
		if t := cs.State.Terminated; t != nil {
			msg := clip(t.Message)
			if msg == "" {
				msg = clip(d.AgentLog(cs.Name))
			}
			return fmt.Errorf("the agent of --image %s exited in pod %s on node %s (%s, exit code %d: %s); the image must hold this cnperf at %s",
				d.image, p.Name, p.Spec.NodeName, t.Reason, t.ExitCode, msg, AgentPath)
		}
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return fmt.Errorf("pod %s on node %s ended (%s: %s %s)", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Reason, clip(p.Status.Message))
	}
	return nil
}

func clip(s string) string {
	s = oneLine(s)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// running says whether every container of p runs, and p has its address.
func running(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || len(p.Status.ContainerStatuses) < len(p.Spec.Containers) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

func (b *Backend) waitLimit() time.Duration {
	if b.Wait > 0 {
		return b.Wait
	}
	return 3 * time.Minute
}

func (b *Backend) pollEvery() time.Duration {
	if b.poll > 0 {
		return b.poll
	}
	return 250 * time.Millisecond
}

// waitRunning waits until every pod runs, failing at once on a pod that
// never will (an image the nodes cannot pull or run).
func (d *Deployment) waitRunning(ctx context.Context) error {
	deadline := time.Now().Add(d.b.waitLimit())
	for {
		pl, err := d.cl.Core.Pods(d.ns).List(ctx, metav1.ListOptions{LabelSelector: LabelDeploy + "=" + d.id})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return d.cl.explain(err, "list pods in "+d.ns)
		}
		byName := map[string]*corev1.Pod{}
		for i := range pl.Items {
			byName[pl.Items[i].Name] = &pl.Items[i]
		}
		var waiting []string
		for _, kp := range d.kpods {
			p := byName[kp.name]
			if p == nil {
				return fmt.Errorf("pod %s is gone from namespace %s", kp.name, d.ns)
			}
			if err := d.problem(p); err != nil {
				return err
			}
			if !running(p) {
				waiting = append(waiting, kp.name+" "+phase(p))
				continue
			}
			ip, err := netip.ParseAddr(p.Status.PodIP)
			if err != nil {
				return fmt.Errorf("pod %s: address %q: %v", kp.name, p.Status.PodIP, err)
			}
			for _, a := range kp.agents {
				a.IP = ip
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		ev := d.warning(ctx)
		if ev != nil && ev.Reason == "FailedCreatePodSandBox" && ev.Count >= 3 {
			return fmt.Errorf("node %s cannot create pods (%s, %d times: %s); the node's container runtime refuses them, see its logs",
				d.podNode(ev.InvolvedObject.Name), ev.Reason, ev.Count, clip(ev.Message))
		}
		if time.Now().After(deadline) {
			last := ""
			if ev != nil {
				last = fmt.Sprintf("; last warning: pod %s %s: %s", ev.InvolvedObject.Name, ev.Reason, clip(ev.Message))
			}
			return fmt.Errorf("pods not running after %v (%s)%s; see kubectl -n %s describe pods", d.b.waitLimit(), strings.Join(waiting, ", "), last, d.ns)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d.b.pollEvery()):
		}
	}
}

// warning is the latest Warning event about the deployment's pods, if the
// kubeconfig's user may list events (not needed otherwise).
func (d *Deployment) warning(ctx context.Context) *corev1.Event {
	el, err := d.cl.Core.Events(d.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var last *corev1.Event
	for i := range el.Items {
		e := &el.Items[i]
		if e.Type != corev1.EventTypeWarning || e.InvolvedObject.Kind != "Pod" || e.Reason == "MissingClusterDNS" {
			continue
		}
		if last == nil || e.LastTimestamp.After(last.LastTimestamp.Time) || e.Count > last.Count {
			last = e
		}
	}
	return last
}

func (d *Deployment) podNode(name string) string {
	for _, kp := range d.kpods {
		if kp.name == name {
			return kp.node
		}
	}
	return "?"
}

// phase is a pod's state in a few words: Pending (ContainerCreating).
func phase(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return s + " (" + w.Reason + ")"
		}
	}
	return s
}

// connectAgents forwards each agent's control port and waits for it to
// answer.
func (d *Deployment) connectAgents(ctx context.Context) error {
	limit := d.b.waitLimit()
	for _, name := range d.order {
		p := d.Pods[name]
		t, err := d.cl.Forward.Forward(ctx, d.ns, p.kp.name, p.port)
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.tunnels = append(d.tunnels, t)
		d.mu.Unlock()
		c := &agent.Client{Network: "tcp", Addr: t.Addr()}
		wctx, cancel := context.WithTimeout(ctx, limit)
		_, werr := c.Wait(wctx)
		cancel()
		if werr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			why := werr.Error()
			if terr := t.LastError(); terr != nil {
				why = terr.Error()
			}
			log := ""
			if l := d.AgentLog(name); l != "" {
				log = "; its log: " + oneLine(l)
			}
			return fmt.Errorf("the agent in pod %s did not answer through the API server's port-forward to 127.0.0.1:%d (%s)%s; check that the role allows pods/portforward (%s)",
				p.kp.name, p.port, clip(why), log, RBACDoc)
		}
		p.Agent = c // its pid, in the pod's PID namespace, means nothing here
		c.Health = d.agentHealth(p, name, t)
		c.Alive = "its pod " + p.kp.name + " is Running"
	}
	return nil
}

// Namespace is the deployment's namespace.
func (d *Deployment) Namespace() string { return d.ns }

// Dial implements backend.Deployment: containers of one pod dial
// loopback; anything else the peer pod's address (its node's for
// hostNetwork pods).
func (d *Deployment) Dial(_ context.Context, from, to, _ string, port int) (netip.AddrPort, error) {
	f, t, err := d.Pair(from, to)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if f.kp == t.kp {
		return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), nil
	}
	return netip.AddrPortFrom(t.IP, uint16(port)), nil
}

// Params implements backend.Deployment: the network and each pod's node.
func (d *Deployment) Params() map[string]any {
	var pl []string
	for _, name := range d.order {
		pl = append(pl, name+"="+d.Pods[name].kp.node)
	}
	m := map[string]any{"kubernetes_network": d.kind.summary, "kubernetes_nodes": strings.Join(pl, " ")}
	// zones and instance types where the nodes have the labels
	for _, f := range []struct {
		key string
		get func(w nodeWhere) string
	}{{"kubernetes_zones", func(w nodeWhere) string { return w.zone }}, {"kubernetes_instance_types", func(w nodeWhere) string { return w.instanceType }}} {
		var vs []string
		any := false
		for _, name := range d.order {
			v := f.get(d.where[d.Pods[name].kp.node])
			any = any || v != ""
			vs = append(vs, name+"="+cmp.Or(v, "-"))
		}
		if any {
			m[f.key] = strings.Join(vs, " ")
		}
	}
	if pl := d.b.Opts.Placement.Describe(); pl != "" {
		m["kubernetes_placement"] = pl
	}
	return m
}

// AgentLog implements backend.Deployment: the end of the agent
// container's log.
func (d *Deployment) AgentLog(name string) string {
	p := d.Pods[name]
	if p == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tail := int64(3)
	b, err := d.cl.Core.Pods(d.ns).GetLogs(p.kp.name, &corev1.PodLogOptions{Container: name, TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Teardown implements backend.Deployment: the port-forwards, then the
// namespace and everything in it; it waits until the namespace is gone.
// Harmless twice.
func (d *Deployment) Teardown() error {
	d.mu.Lock()
	ts := d.tunnels
	d.tunnels = nil
	d.mu.Unlock()
	for _, t := range ts {
		t.Close()
	}
	d.mu.Lock()
	n := d.services
	d.mu.Unlock()
	// the namespace controller deletes every Service in it first (and the
	// garbage collector their EndpointSlices): allow for thousands
	ctx, cancel := context.WithTimeout(context.Background(), d.b.waitLimit()+time.Duration(n)*30*time.Millisecond)
	defer cancel()
	return deleteNamespace(ctx, d.cl, d.ns, d.b.pollEvery())
}

// deleteNamespace deletes ns and waits until the API server no longer has it.
func deleteNamespace(ctx context.Context, cl *Clients, ns string, poll time.Duration) error {
	bg := metav1.DeletePropagationBackground
	err := cl.Core.Namespaces().Delete(ctx, ns, metav1.DeleteOptions{PropagationPolicy: &bg})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return cl.explain(err, "delete namespace "+ns)
	}
	for {
		_, err := cl.Core.Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s is still terminating; `cnperf clean --backend kubernetes` removes it later", ns)
		case <-time.After(poll):
		}
	}
}

// Environment implements backend.Deployment: the cluster as the API
// shows it, once per run.
func (d *Deployment) Environment(ctx context.Context, env *result.Environment) {
	if env.Kubernetes != nil {
		return
	}
	env.Kubernetes = Describe(ctx, d.cl, d.image)
	env.Kubernetes.Placement = d.b.Opts.Placement.Describe()
	env.Kubernetes.PullSecret = d.b.Opts.PullSecret
}
