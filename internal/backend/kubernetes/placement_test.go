package kubernetes

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
)

// zoned is a cluster of four nodes in two zones: n1 small and n2 large in
// zone-a, n3 large in zone-b and n4, a dedicated node tainted
// dedicated=perf:NoSchedule, in zone-b.
func zoned() []corev1.Node {
	var out []corev1.Node
	for i, l := range []map[string]string{
		{LabelZone: "zone-a", LabelInstanceType: "small"},
		{LabelZone: "zone-a", LabelInstanceType: "large"},
		{LabelZone: "zone-b", LabelInstanceType: "large"},
		{LabelZone: "zone-b", LabelInstanceType: "large", "pool": "perf"},
	} {
		n := node(fmt.Sprintf("n%d", i+1), fmt.Sprintf("10.100.0.%d", i+1))
		n.Labels = l
		if l["pool"] == "perf" {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "perf", Effect: corev1.TaintEffectNoSchedule}}
		}
		out = append(out, *n)
	}
	return out
}

// parsePlacement reads the flags as `cnperf run` does.
func parsePlacement(t *testing.T, args ...string) Placement {
	t.Helper()
	var p Placement
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	p.RegisterFlags(fs)
	var pl string
	fs.StringVar(&pl, "placement", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	p.CrossZone = slices.Contains(strings.Split(pl, ","), CrossZone)
	return p
}

func TestChoose(t *testing.T) {
	const tol = "--tolerate=dedicated=perf:NoSchedule"
	cordon := func(name string) func([]corev1.Node) {
		return func(ns []corev1.Node) {
			for i := range ns {
				if ns[i].Name == name {
					ns[i].Spec.Unschedulable = true
				}
			}
		}
	}
	unlabel := func(ns []corev1.Node) {
		for i := range ns {
			ns[i].Labels = nil
			ns[i].Spec.Taints = nil
		}
	}
	for _, c := range []struct {
		name   string
		args   []string
		hosts  int  // topology hosts (2: cross-host, 1: same-host)
		svc    bool // a services topology
		change func([]corev1.Node)
		want   string // the hosts' nodes, or the error
	}{
		{name: "by name", hosts: 2, want: "map[1:n1 2:n2]"},
		{name: "same-host by name", hosts: 1, want: "map[1:n1]"},
		{name: "nodes", args: []string{"--nodes", "n3,n1"}, hosts: 2, want: "map[1:n3 2:n1]"},
		{name: "nodes, same-host on the first", args: []string{"--nodes", "n2,n3"}, hosts: 1, want: "map[1:n2]"},
		{name: "nodes, one too few", args: []string{"--nodes", "n1"}, hosts: 2,
			want: "--nodes n1 names 1 node(s) and cross-host needs 2, one pod per node: name more, or use --placement same-host"},
		{name: "nodes, no such node", args: []string{"--nodes", "n1,n9"}, hosts: 2,
			want: "--nodes n1,n9: the cluster has no node n9; it has n1, n2, n3, n4"},
		{name: "nodes, tainted", args: []string{"--nodes", "n1,n4"}, hosts: 2,
			want: "--nodes n1,n4: node n4 is tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule"},
		{name: "nodes, tainted, tolerated", args: []string{"--nodes", "n1,n4", tol}, hosts: 2, want: "map[1:n1 2:n4]"},
		{name: "nodes, cordoned", args: []string{"--nodes", "n1,n2"}, hosts: 2, change: cordon("n2"), want: "--nodes n1,n2: node n2 is cordoned"},
		{name: "nodes, one zone, cross-zone", args: []string{"--nodes", "n1,n2", "--placement", "cross-zone"}, hosts: 2,
			want: `--nodes n1,n2 with --placement cross-zone: n1 is in zone "zone-a" and n2 in zone "zone-a"; name nodes of two zones`},
		{name: "nodes, two zones, cross-zone", args: []string{"--nodes", "n1,n3", "--placement", "cross-zone"}, hosts: 2, want: "map[1:n1 2:n3]"},
		{name: "nodes against a selector", args: []string{"--nodes", "n1,n2", "--node-selector-server", "node.kubernetes.io/instance-type=small"}, hosts: 2,
			want: "--nodes n1,n2: node n2 does not match --node-selector-server node.kubernetes.io/instance-type=small"},
		{name: "selector", args: []string{"--node-selector", "node.kubernetes.io/instance-type=large"}, hosts: 2, want: "map[1:n2 2:n3]"},
		{name: "client and server selectors", args: []string{"--node-selector-client", "topology.kubernetes.io/zone=zone-b", "--node-selector-server", "topology.kubernetes.io/zone=zone-a"},
			hosts: 2, want: "map[1:n3 2:n1]"},
		{name: "selector on a tainted node", args: []string{"--node-selector", "pool=perf"}, hosts: 1,
			want: "--node-selector pool=perf matches none of the schedulable nodes (n1, n2, n3) (not usable: n4 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule); label a node (kubectl label node NAME pool=perf) or change the selector"},
		{name: "selector on a tainted node, tolerated", args: []string{"--node-selector", "pool=perf", tol}, hosts: 1, want: "map[1:n4]"},
		{name: "selector with one node, cross-host", args: []string{"--node-selector", "pool=perf", tol}, hosts: 2,
			want: "cross-host needs 2 nodes, the client's apart from the servers'; the client may run on n4, the servers on n4: widen the selectors, or use --placement same-host"},
		{name: "same-host, selectors disjoint", args: []string{"--node-selector-client", "node.kubernetes.io/instance-type=small", "--node-selector-server", "node.kubernetes.io/instance-type=large"}, hosts: 1,
			want: "same-host needs one node that both --node-selector-client node.kubernetes.io/instance-type=small and --node-selector-server node.kubernetes.io/instance-type=large select; the client's are n1, the servers' n2, n3"},
		{name: "cross-zone", args: []string{"--placement", "cross-zone"}, hosts: 2, want: "map[1:n1 2:n3]"},
		{name: "cross-zone, tolerated", args: []string{"--placement", "cross-zone", tol, "--node-selector-server", "pool=perf"}, hosts: 2, want: "map[1:n1 2:n4]"},
		{name: "cross-zone, one zone left", args: []string{"--placement", "cross-zone"}, hosts: 2, change: cordon("n3"),
			want: "--placement cross-zone needs nodes in two topology.kubernetes.io/zone values; the schedulable nodes are in zone-a (n1, n2) (not usable: n3 cordoned; n4 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule): label nodes of another zone, or use --placement cross-host"},
		{name: "cross-zone, selected one zone", args: []string{"--placement", "cross-zone", "--node-selector", "topology.kubernetes.io/zone=zone-a"}, hosts: 2,
			want: "--placement cross-zone needs nodes in two topology.kubernetes.io/zone values; the nodes the selectors choose are in zone-a (n1, n2) (not usable: n4 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule): label nodes of another zone, or use --placement cross-host"},
		{name: "cross-zone, no zone labels", args: []string{"--placement", "cross-zone"}, hosts: 2, change: unlabel,
			want: "--placement cross-zone needs nodes in two topology.kubernetes.io/zone values; the schedulable nodes are in no topology.kubernetes.io/zone label (n1, n2, n3, n4): label nodes of another zone, or use --placement cross-host"},
		{name: "cross-zone, servers in the client's zone", args: []string{"--placement", "cross-zone", "--node-selector-client", "topology.kubernetes.io/zone=zone-a", "--node-selector-server", "node.kubernetes.io/instance-type=small"}, hosts: 2,
			want: "--placement cross-zone needs nodes in two topology.kubernetes.io/zone values; the nodes the selectors choose are in zone-a (n1, n2) (not usable: n4 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule): label nodes of another zone, or use --placement cross-host"},
		{name: "cross-zone, three hosts, one server node in another zone", args: []string{"--placement", "cross-zone", "--node-selector-client", "topology.kubernetes.io/zone=zone-a"}, hosts: 3,
			want: "--placement cross-zone needs 2 server node(s) in another zone than the client's; the client may run on n1 (zone-a), n2 (zone-a), the servers on n1 (zone-a), n2 (zone-a), n3 (zone-b) (not usable: n4 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule): widen the selectors"},
		{name: "cross-zone, same-host unaffected", args: []string{"--placement", "cross-zone"}, hosts: 1, want: "map[1:n1]"},
		{name: "services spread over the servers' nodes", args: []string{"--node-selector-server", "topology.kubernetes.io/zone=zone-b", tol}, hosts: 5, svc: true,
			want: "map[1:n1 2:n3 3:n4 4:n3 5:n4]"},
		{name: "services, cross-zone", args: []string{"--placement", "cross-zone"}, hosts: 4, svc: true, want: "map[1:n1 2:n3 3:n3 4:n3]"},
		{name: "too few nodes", hosts: 4, want: "the cluster has 3 schedulable node(s) (n1, n2, n3) and cross-host needs 4, one pod per node (not usable: n4 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule): add a node, or use --placement same-host"},
		{name: "nothing usable", hosts: 1, change: func(ns []corev1.Node) { cordon("n1")(ns); cordon("n2")(ns); cordon("n3")(ns) },
			want: "the cluster has no schedulable node (Ready, not cordoned, without untolerated NoSchedule taints) (not usable: n1 cordoned; n2 cordoned; n3 cordoned; n4 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule); make one ready (kubectl get nodes)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := zoned()
			if c.change != nil {
				c.change(ns)
			}
			p := parsePlacement(t, c.args...)
			got, err := p.choose(backend.Topology{Hosts: c.hosts, Services: c.svc}, ns)
			s := fmt.Sprint(got)
			if err != nil {
				s = err.Error()
			}
			if s != c.want {
				t.Errorf("\n got %s\nwant %s", s, c.want)
			}
		})
	}
}

// TestPlacementFlags: every malformed flag is refused while parsing, in
// one line.
func TestPlacementFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // the error; "" = parsed, Describe == desc
		desc string
	}{
		{args: []string{"--nodes", "a,b", "--nodes", "c"}, desc: "--nodes a,b,c"},
		{args: []string{"--nodes", "a,a"}, want: "node a named twice"},
		{args: []string{"--nodes", ","}, want: "no node named"},
		{args: []string{"--node-selector", "a=b,c=d", "--node-selector-client", "x=", "--node-selector-server", "topology.kubernetes.io/zone=eu-1a"},
			desc: "--node-selector a=b,c=d --node-selector-client x= --node-selector-server topology.kubernetes.io/zone=eu-1a"},
		{args: []string{"--node-selector", "a"}, want: `"a" is not a node label K=V`},
		{args: []string{"--node-selector", "a=b", "--node-selector", "a=c"}, want: "label a asked to be both b and c"},
		{args: []string{"--node-selector", "bad key=v"}, want: "is not a node label"},
		{args: []string{"--tolerate", "dedicated=perf:NoSchedule,gpu:NoExecute"}, desc: "--tolerate dedicated=perf:NoSchedule,gpu:NoExecute"},
		{args: []string{"--tolerate", "dedicated"}, want: `toleration "dedicated" has no effect; use KEY[=VALUE]:EFFECT`},
		{args: []string{"--tolerate", "dedicated:Never"}, want: `effect "Never"; use NoSchedule, PreferNoSchedule or NoExecute`},
		{args: []string{"--tolerate", ":NoSchedule"}, want: "is not a taint key"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var p Placement
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(new(strings.Builder))
			p.RegisterFlags(fs)
			err := fs.Parse(c.args)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%v; want one line with %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Describe(); got != c.desc {
				t.Errorf("Describe() = %q; want %q", got, c.desc)
			}
		})
	}
	// the same flags as values by name (a backend registry's way)
	p, err := PlacementOf(map[string]string{"nodes": "a,b", "node-selector-client": "x=1", "tolerate": "k=v:NoExecute"})
	if err != nil || p.Describe() != "--nodes a,b --node-selector-client x=1 --tolerate k=v:NoExecute" {
		t.Errorf("PlacementOf: %q %v", p.Describe(), err)
	}
	if _, err := PlacementOf(map[string]string{"tolerate": "k"}); err == nil || !strings.Contains(err.Error(), "--tolerate k: toleration") {
		t.Errorf("PlacementOf a bad toleration: %v", err)
	}
	if specs := PlacementSpecs(); len(specs) != len(placementFlags) || specs[0].Name != "nodes" || specs[0].Help == "" {
		t.Errorf("PlacementSpecs %+v", specs)
	}
}

// TestTolerates is Kubernetes' matching rule.
func TestTolerates(t *testing.T) {
	taint := corev1.Taint{Key: "dedicated", Value: "perf", Effect: corev1.TaintEffectNoSchedule}
	for _, c := range []struct {
		tol  string
		want bool
	}{
		{"dedicated=perf:NoSchedule", true},
		{"dedicated:NoSchedule", true},
		{"dedicated=other:NoSchedule", false},
		{"dedicated=perf:NoExecute", false},
		{"other=perf:NoSchedule", false},
	} {
		tol, err := ParseToleration(c.tol)
		if err != nil {
			t.Fatal(err)
		}
		if got := tolerates([]corev1.Toleration{tol}, taint); got != c.want {
			t.Errorf("%s tolerates %s: %v, want %v", c.tol, taintString(taint), got, c.want)
		}
	}
}

// TestDeployPlacement: the chosen nodes, their zones and instance types
// in the params and the environment; tolerations and the pull secret in
// the objects created (golden).
func TestDeployPlacement(t *testing.T) {
	var objs []runtime.Object
	for _, n := range zoned() {
		objs = append(objs, &n)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: "team"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example":{"auth":"dTpw"}}}`)}}
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "opaque", Namespace: "default"}, Type: corev1.SecretTypeOpaque}
	objs = append(objs, secret, opaque)
	for _, c := range []struct {
		name       string
		args       []string
		pullSecret string
		nodes      string
		zones      string
		types      string
		err        string
	}{
		{name: "cross-zone-tolerated", args: []string{"--placement", "cross-zone", "--node-selector-server", "pool=perf", "--tolerate", "dedicated=perf:NoSchedule"},
			pullSecret: "team/regcred", nodes: "c1=n1 s2=n4", zones: "c1=zone-a s2=zone-b", types: "c1=small s2=large"},
		{name: "no secret", args: []string{"--placement", "cross-zone"}, pullSecret: "regcred",
			err: "--image-pull-secret: namespace default has no Secret regcred; create it (kubectl -n default create secret docker-registry regcred"},
		{name: "opaque secret", args: []string{"--placement", "cross-zone"}, pullSecret: "opaque",
			err: "--image-pull-secret default/opaque is of type Opaque; the nodes pull only with kubernetes.io/dockerconfigjson"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFake(t, objs...)
			b.Opts.Placement = parsePlacement(t, c.args...)
			b.Opts.PullSecret = c.pullSecret
			topo, _ := pairs.Topology("pod", []ground.Placement{ground.CrossHost}, -1, -1)
			d, err := b.Deploy(context.Background(), topo)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
					t.Errorf("deploy: %v; want one line with %q", err, c.err)
				}
				if got := f.namespaces(); len(got) != 0 {
					t.Errorf("left namespaces %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pm := d.Params()
			if pm["kubernetes_nodes"] != c.nodes || pm["kubernetes_zones"] != c.zones || pm["kubernetes_instance_types"] != c.types ||
				pm["kubernetes_placement"] != b.Opts.Placement.Describe() {
				t.Errorf("params %v", pm)
			}
			var env result.Environment
			d.Environment(context.Background(), &env)
			k := env.Kubernetes
			if k.Placement != b.Opts.Placement.Describe() || k.PullSecret != c.pullSecret || len(k.Nodes) != 4 || k.Nodes[3].Zone != "zone-b" || k.Nodes[0].InstanceType != "small" {
				t.Errorf("environment %+v", k)
			}
			if err := d.Teardown(); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "deploy-placement-"+c.name, f.writes())
		})
	}
}

// TestPullSecretAccess: reading the secret is checked ahead, in its namespace.
func TestPullSecretAccess(t *testing.T) {
	b, f := newFake(t, nodes(2)...)
	f.cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		ra := r.Spec.ResourceAttributes
		r.Status.Allowed = !(ra.Verb == "get" && ra.Resource == "secrets" && ra.Namespace == "team")
		return true, r, nil
	})
	b.Opts.PullSecret = "team/regcred"
	err := b.Check("pod")
	if want := "the kubeconfig's user may not get secrets in team (RBAC)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check: %v; want %q", err, want)
	}
	for _, bad := range []string{"Reg Cred", "a/b/c", "/x"} {
		if err := (Options{Image: testImage, PullSecret: bad}).Validate(); err == nil || !strings.Contains(err.Error(), "--image-pull-secret") {
			t.Errorf("--image-pull-secret %q: %v", bad, err)
		}
	}
}

// TestRegistered: the placement flags and --image-pull-secret are the
// registered backend's flags, checked by CheckFlags, and cross-zone comes
// from the run's --placement through Config.Placements.
func TestRegistered(t *testing.T) {
	info, err := backend.Get(Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string{"image-pull-secret"}, placementFlags...) {
		if !slices.ContainsFunc(info.Flags, func(s option.Spec) bool { return s.Name == n }) {
			t.Errorf("flag --%s not registered", n)
		}
	}
	for _, c := range []struct {
		values map[string]string
		errHas string
	}{
		{map[string]string{"image": "x:1", "nodes": "a,b", "tolerate": "k:NoSchedule", "image-pull-secret": "ns/cred"}, ""},
		{map[string]string{"image": "x:1", "tolerate": "k"}, "--tolerate k: toleration \"k\" has no effect"},
		{map[string]string{"image": "x:1", "node-selector-server": "zone"}, "is not a node label K=V"},
		{map[string]string{"image": "x:1", "image-pull-secret": "Bad Name"}, "--image-pull-secret \"Bad Name\""},
		{map[string]string{"nodes": "a,b"}, "needs --image"},
	} {
		err := info.CheckFlags(c.values)
		if (c.errHas == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.errHas) {
			t.Errorf("CheckFlags(%v) = %v; want %q", c.values, err, c.errHas)
		}
	}
	flags := map[string]string{"image": "x:1", "nodes": "a,b", "image-pull-secret": "cred"}
	for _, own := range [][]string{nil, {CrossZone}} {
		b := info.New(backend.Config{Flags: flags, Placements: own}).(*Backend)
		if b.Opts.Placement.CrossZone != (own != nil) || strings.Join(b.Opts.Placement.Nodes, ",") != "a,b" || b.Opts.PullSecret != "cred" {
			t.Errorf("New with placements %v: %+v", own, b.Opts)
		}
	}
}
