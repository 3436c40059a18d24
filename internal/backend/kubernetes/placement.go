package kubernetes

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/option"
)

// The node labels that say where a node is and what it is (the
// well-known labels every cloud provider sets), with the deprecated ones
// older clusters still carry.
const (
	LabelZone             = "topology.kubernetes.io/zone"
	LabelZoneBeta         = "failure-domain.beta.kubernetes.io/zone"
	LabelInstanceType     = "node.kubernetes.io/instance-type"
	LabelInstanceTypeBeta = "beta.kubernetes.io/instance-type"
)

// CrossZone is the --placement value that asks for cross-host with the
// hosts in two different zones; the backend runs it as cross-host.
const CrossZone = "cross-zone"

// Placement says which nodes the agents may run on. Host 1 of a topology
// is the client's node, hosts 2 and up the servers' (and the services'
// backends'): the client selector chooses host 1, the server selector the
// others; same-host puts both on one node that both select.
type Placement struct {
	Nodes          []string          // --nodes: host h on Nodes[h-1]
	Selector       map[string]string // --node-selector: every agent's node
	ClientSelector map[string]string // --node-selector-client: host 1's
	ServerSelector map[string]string // --node-selector-server: the others'
	CrossZone      bool              // --placement cross-zone
	// Tolerations let agents onto nodes with these taints (--tolerate);
	// they go into every pod's spec as well.
	Tolerations []corev1.Toleration
}

// placementFlags are the flags Placement.RegisterFlags adds.
var placementFlags = []string{"nodes", "node-selector", "node-selector-client", "node-selector-server", "tolerate"}

// RegisterFlags adds the placement flags to fs.
func (p *Placement) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(value{func() string { return strings.Join(p.Nodes, ",") }, func(s string) error {
		for _, n := range splitComma(s) {
			if slices.Contains(p.Nodes, n) {
				return fmt.Errorf("node %s named twice; name each node once", n)
			}
			p.Nodes = append(p.Nodes, n)
		}
		if len(p.Nodes) == 0 {
			return errors.New("no node named; use --nodes A,B")
		}
		return nil
	}}, "nodes", "--backend kubernetes: the nodes to run on, in order: A,B[,C] puts the client on A and the servers on B (and C...); same-host uses A")
	sel := func(name, whose string, m *map[string]string) {
		fs.Var(value{func() string { return selectorString(*m) }, func(s string) error { return parseSelector(s, m) }},
			name, "--backend kubernetes: run "+whose+" only on nodes with these labels, K=V[,K=V] (repeatable)")
	}
	sel("node-selector", "every agent", &p.Selector)
	sel("node-selector-client", "the client", &p.ClientSelector)
	sel("node-selector-server", "the servers (and service backends)", &p.ServerSelector)
	fs.Var(value{p.tolerationString, func(s string) error {
		for _, t := range splitComma(s) {
			tol, err := ParseToleration(t)
			if err != nil {
				return err
			}
			p.Tolerations = append(p.Tolerations, tol)
		}
		return nil
	}}, "tolerate", "--backend kubernetes: let the agents onto nodes with this taint, KEY[=VALUE]:EFFECT (NoSchedule, PreferNoSchedule, NoExecute), repeatable or comma-separated")
}

// value is a flag whose String shows what was set (flag.Func's shows
// nothing, and `cnperf run` refuses flags given empty).
type value struct {
	get func() string
	set func(string) error
}

func (v value) String() string {
	if v.get == nil {
		return ""
	}
	return v.get()
}

func (v value) Set(s string) error { return v.set(s) }

func (p *Placement) tolerationString() string {
	var s []string
	for _, t := range p.Tolerations {
		s = append(s, taintString(corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}))
	}
	return strings.Join(s, ",")
}

func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// labelKeyRE and labelValueRE are what the API server takes in a label
// (an optional DNS prefix and a name; a value of up to 63 characters).
var (
	labelKeyRE   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValueRE = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

func parseSelector(s string, m *map[string]string) error {
	if *m == nil {
		*m = map[string]string{}
	}
	kvs := splitComma(s)
	if len(kvs) == 0 {
		return errors.New("no label given; use K=V, such as topology.kubernetes.io/zone=eu-west-1a")
	}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !labelKeyRE.MatchString(k) || !labelValueRE.MatchString(v) {
			return fmt.Errorf("%q is not a node label K=V; use such as topology.kubernetes.io/zone=eu-west-1a", kv)
		}
		if old, ok := (*m)[k]; ok && old != v {
			return fmt.Errorf("label %s asked to be both %s and %s", k, old, v)
		}
		(*m)[k] = v
	}
	return nil
}

var effects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// ParseToleration reads KEY[=VALUE]:EFFECT, as kubectl taint writes a
// taint: with a value it tolerates that value only, without it any.
func ParseToleration(s string) (corev1.Toleration, error) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return corev1.Toleration{}, fmt.Errorf("toleration %q has no effect; use KEY[=VALUE]:EFFECT, such as dedicated=perf:NoSchedule", s)
	}
	kv, eff := s[:i], corev1.TaintEffect(s[i+1:])
	if !slices.Contains(effects, eff) {
		return corev1.Toleration{}, fmt.Errorf("toleration %q: effect %q; use NoSchedule, PreferNoSchedule or NoExecute", s, eff)
	}
	k, v, hasValue := strings.Cut(kv, "=")
	if !labelKeyRE.MatchString(k) || !labelValueRE.MatchString(v) {
		return corev1.Toleration{}, fmt.Errorf("toleration %q: %q is not a taint key; use KEY[=VALUE]:EFFECT, such as dedicated=perf:NoSchedule", s, kv)
	}
	t := corev1.Toleration{Key: k, Operator: corev1.TolerationOpExists, Effect: eff}
	if hasValue {
		t.Operator, t.Value = corev1.TolerationOpEqual, v
	}
	return t, nil
}

// tolerates is Kubernetes' rule: same key (or any, for an empty key with
// Exists), same effect (or any, for an empty one), and Exists or the
// same value.
func tolerates(tols []corev1.Toleration, taint corev1.Taint) bool {
	for _, t := range tols {
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		if t.Operator == corev1.TolerationOpExists || t.Value == taint.Value {
			return true
		}
	}
	return false
}

// taintString is a taint as kubectl taint takes it.
func taintString(t corev1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	return s + ":" + string(t.Effect)
}

// zoneOf and instanceTypeOf read the well-known labels.
func zoneOf(n *corev1.Node) string {
	if z := n.Labels[LabelZone]; z != "" {
		return z
	}
	return n.Labels[LabelZoneBeta]
}

func instanceTypeOf(n *corev1.Node) string {
	if t := n.Labels[LabelInstanceType]; t != "" {
		return t
	}
	return n.Labels[LabelInstanceTypeBeta]
}

// unusable says why agents cannot be pinned to n ("" when they can): not
// Ready, cordoned, or a NoSchedule/NoExecute taint not tolerated.
func unusable(n *corev1.Node, tols []corev1.Toleration) string {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	switch {
	case !ready:
		return "not Ready"
	case n.Spec.Unschedulable:
		return "cordoned"
	}
	for _, t := range n.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerates(tols, t) {
			return "tainted " + taintString(t) + ": add --tolerate " + taintString(t)
		}
	}
	return ""
}

func matches(n *corev1.Node, sels ...map[string]string) bool {
	for _, sel := range sels {
		for k, v := range sel {
			if got, ok := n.Labels[k]; !ok || got != v {
				return false
			}
		}
	}
	return true
}

func selectorString(m map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}

func names(ns []*corev1.Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.Name
	}
	return strings.Join(s, ", ")
}

// Describe says how the nodes are chosen, for the result's environment
// ("" when by name order alone).
func (p Placement) Describe() string {
	var s []string
	if len(p.Nodes) > 0 {
		s = append(s, "--nodes "+strings.Join(p.Nodes, ","))
	}
	for _, f := range []struct {
		flag string
		m    map[string]string
	}{{"--node-selector", p.Selector}, {"--node-selector-client", p.ClientSelector}, {"--node-selector-server", p.ServerSelector}} {
		if len(f.m) > 0 {
			s = append(s, f.flag+" "+selectorString(f.m))
		}
	}
	if p.CrossZone {
		s = append(s, "--placement cross-zone")
	}
	if len(p.Tolerations) > 0 {
		s = append(s, "--tolerate "+p.tolerationString())
	}
	return strings.Join(s, " ")
}

// hostsNeeded is how many hosts topo places pods on.
func hostsNeeded(topo backend.Topology) int {
	need := max(topo.Hosts, 1)
	for _, p := range topo.Pods {
		need = max(need, p.Host)
	}
	return need
}

// choose maps the topology's hosts onto nodes as p says: host 1 the
// client's, the others the servers'. Without --nodes the nodes are tried
// in name order, the first that satisfy every constraint taken. A
// services topology asking for more server hosts than there are nodes
// spreads its backends over the nodes it has (every one on another node
// than the client). What the cluster cannot satisfy is one line naming
// the nodes (and zones) it found.
func (p Placement) choose(topo backend.Topology, all []corev1.Node) (map[int]string, error) {
	need := hostsNeeded(topo)
	nodes := make([]*corev1.Node, len(all))
	for i := range all {
		nodes[i] = &all[i]
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if len(p.Nodes) > 0 {
		return p.chooseNamed(topo, need, nodes)
	}
	var usable, excluded []*corev1.Node
	why := map[string]string{}
	for _, n := range nodes {
		if w := unusable(n, p.Tolerations); w != "" {
			excluded = append(excluded, n)
			why[n.Name] = w
			continue
		}
		usable = append(usable, n)
	}
	besides := func() string {
		if len(excluded) == 0 {
			return ""
		}
		var s []string
		for _, n := range excluded {
			s = append(s, n.Name+" "+why[n.Name])
		}
		return " (not usable: " + strings.Join(s, "; ") + ")"
	}
	if len(usable) == 0 {
		return nil, fmt.Errorf("the cluster has no schedulable node (Ready, not cordoned, without untolerated NoSchedule taints)%s; make one ready (kubectl get nodes)", besides())
	}
	filter := func(sels ...map[string]string) []*corev1.Node {
		var out []*corev1.Node
		for _, n := range usable {
			if matches(n, sels...) {
				out = append(out, n)
			}
		}
		return out
	}
	clients := filter(p.Selector, p.ClientSelector)
	servers := filter(p.Selector, p.ServerSelector)
	for _, c := range []struct {
		flag string
		sel  map[string]string
		got  []*corev1.Node
	}{{"--node-selector", p.Selector, filter(p.Selector)}, {"--node-selector-client", p.ClientSelector, clients}, {"--node-selector-server", p.ServerSelector, servers}} {
		if len(c.sel) > 0 && len(c.got) == 0 {
			return nil, fmt.Errorf("%s %s matches none of the schedulable nodes (%s)%s; label a node (kubectl label node NAME %s) or change the selector",
				c.flag, selectorString(c.sel), names(usable), besides(), strings.ReplaceAll(selectorString(c.sel), ",", " "))
		}
	}
	selected := "the schedulable nodes"
	if len(p.Selector)+len(p.ClientSelector)+len(p.ServerSelector) > 0 {
		selected = "the nodes the selectors choose"
	}

	if need == 1 {
		both := filter(p.Selector, p.ClientSelector, p.ServerSelector)
		if len(both) == 0 {
			return nil, fmt.Errorf("same-host needs one node that both --node-selector-client %s and --node-selector-server %s select; the client's are %s, the servers' %s",
				selectorString(p.ClientSelector), selectorString(p.ServerSelector), names(clients), names(servers))
		}
		return map[int]string{1: both[0].Name}, nil
	}

	if p.CrossZone {
		zones := map[string][]string{}
		var noZone []string
		for _, n := range append(slices.Clone(clients), servers...) {
			z := zoneOf(n)
			if z == "" {
				if !slices.Contains(noZone, n.Name) {
					noZone = append(noZone, n.Name)
				}
				continue
			}
			if !slices.Contains(zones[z], n.Name) {
				zones[z] = append(zones[z], n.Name)
			}
		}
		if len(zones) < 2 {
			var found []string
			for _, z := range slices.Sorted(maps.Keys(zones)) {
				found = append(found, z+" ("+strings.Join(zones[z], ", ")+")")
			}
			if len(noZone) > 0 {
				found = append(found, "no "+LabelZone+" label ("+strings.Join(noZone, ", ")+")")
			}
			return nil, fmt.Errorf("--placement cross-zone needs nodes in two %s values; %s are in %s%s: label nodes of another zone, or use --placement cross-host",
				LabelZone, selected, strings.Join(found, ", and "), besides())
		}
	}

	for _, c := range clients {
		var others []*corev1.Node
		for _, s := range servers {
			if s.Name == c.Name || p.CrossZone && (zoneOf(c) == "" || zoneOf(s) == "" || zoneOf(s) == zoneOf(c)) {
				continue
			}
			others = append(others, s)
		}
		if len(others) == 0 || len(others) < need-1 && !topo.Services {
			continue
		}
		out := map[int]string{1: c.Name}
		for h := 2; h <= need; h++ {
			out[h] = others[(h-2)%len(others)].Name
		}
		return out, nil
	}

	// nothing fits: say what was found
	if p.CrossZone {
		return nil, fmt.Errorf("--placement cross-zone needs %d server node(s) in another zone than the client's; the client may run on %s, the servers on %s%s: widen the selectors",
			need-1, zoneList(clients), zoneList(servers), besides())
	}
	if len(p.Selector)+len(p.ClientSelector)+len(p.ServerSelector) == 0 {
		return nil, fmt.Errorf("the cluster has %d schedulable node(s) (%s) and cross-host needs %d, one pod per node%s: add a node, or use --placement same-host",
			len(usable), names(usable), need, besides())
	}
	return nil, fmt.Errorf("cross-host needs %d nodes, the client's apart from the servers'; the client may run on %s, the servers on %s%s: widen the selectors, or use --placement same-host",
		need, names(clients), names(servers), besides())
}

func zoneList(ns []*corev1.Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		z := zoneOf(n)
		if z == "" {
			z = "no zone"
		}
		s[i] = n.Name + " (" + z + ")"
	}
	return strings.Join(s, ", ")
}

// chooseNamed checks --nodes against the cluster and the other options.
func (p Placement) chooseNamed(topo backend.Topology, need int, nodes []*corev1.Node) (map[int]string, error) {
	byName := map[string]*corev1.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, name := range p.Nodes {
		n := byName[name]
		if n == nil {
			return nil, fmt.Errorf("--nodes %s: the cluster has no node %s; it has %s", strings.Join(p.Nodes, ","), name, names(nodes))
		}
		if w := unusable(n, p.Tolerations); w != "" {
			return nil, fmt.Errorf("--nodes %s: node %s is %s", strings.Join(p.Nodes, ","), name, w)
		}
	}
	if need > len(p.Nodes) && !(topo.Services && len(p.Nodes) >= 2) {
		return nil, fmt.Errorf("--nodes %s names %d node(s) and cross-host needs %d, one pod per node: name more, or use --placement same-host",
			strings.Join(p.Nodes, ","), len(p.Nodes), need)
	}
	out := map[int]string{1: p.Nodes[0]}
	for h := 2; h <= need; h++ {
		if need <= len(p.Nodes) {
			out[h] = p.Nodes[h-1]
		} else {
			out[h] = p.Nodes[1+(h-2)%(len(p.Nodes)-1)]
		}
	}
	// the selectors and cross-zone hold for the named nodes too
	for h, name := range out {
		n := byName[name]
		check := []struct {
			flag string
			sel  map[string]string
		}{{"--node-selector", p.Selector}}
		if h == 1 {
			check = append(check, struct {
				flag string
				sel  map[string]string
			}{"--node-selector-client", p.ClientSelector})
		}
		if h > 1 || need == 1 {
			check = append(check, struct {
				flag string
				sel  map[string]string
			}{"--node-selector-server", p.ServerSelector})
		}
		for _, c := range check {
			if !matches(n, c.sel) {
				return nil, fmt.Errorf("--nodes %s: node %s does not match %s %s", strings.Join(p.Nodes, ","), name, c.flag, selectorString(c.sel))
			}
		}
		if p.CrossZone && h > 1 {
			cz, sz := zoneOf(byName[out[1]]), zoneOf(n)
			if cz == "" || sz == "" || cz == sz {
				return nil, fmt.Errorf("--nodes %s with --placement cross-zone: %s is in zone %q and %s in zone %q; name nodes of two zones",
					strings.Join(p.Nodes, ","), out[1], cz, name, sz)
			}
		}
	}
	return out, nil
}

// PlacementSpecs declares the placement flags as option specs, for a
// backend registry that takes each backend's flags as values by name.
func PlacementSpecs() []option.Spec {
	var p Placement
	fs := flag.NewFlagSet("placement", flag.ContinueOnError)
	p.RegisterFlags(fs)
	var out []option.Spec
	for _, name := range placementFlags {
		f := fs.Lookup(name)
		out = append(out, option.Spec{Name: name, Kind: option.List, Help: f.Usage})
	}
	return out
}

// PlacementOf reads the placement flags from their values by name, as
// the flags themselves parse them (cross-zone comes from --placement,
// through backend.Config.Placements).
func PlacementOf(values map[string]string) (Placement, error) {
	var p Placement
	fs := flag.NewFlagSet("placement", flag.ContinueOnError)
	p.RegisterFlags(fs)
	for _, name := range placementFlags {
		if v, ok := values[name]; ok && v != "" {
			if err := fs.Set(name, v); err != nil {
				return Placement{}, fmt.Errorf("--%s %s: %w", name, v, err)
			}
		}
	}
	return p, nil
}
