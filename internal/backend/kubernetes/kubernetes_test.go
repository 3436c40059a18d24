package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/experiment/services"
	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/svc"
	_ "github.com/cnperf/cnperf/internal/workload/all" // the workloads the experiments name
)

const testImage = "registry.example/cnperf:test"

// fakeCluster is client-go's fake clientset with a stand-in kubelet: a pod
// created is given the status podStatus says (by default running, with an
// address on its node), a service a ClusterIP. Every agent is one real
// agent on this machine's loopback, reached by a fake port-forward.
type fakeCluster struct {
	t         *testing.T
	cs        *fake.Clientset
	podStatus func(p *corev1.Pod) corev1.PodStatus
	agentAddr string

	mu       sync.Mutex
	forwards []string // "namespace/pod:port"
	nextIP   map[string]int
	nextSvc  int
}

func node(name, ip string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{PodCIDR: "10.244." + ip[len(ip)-1:] + ".0/24"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", KernelVersion: "6.1.0-test",
				ContainerRuntimeVersion: "containerd://1.6.20", OSImage: "Debian GNU/Linux 12", Architecture: "amd64"},
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
		},
	}
}

// nodes makes n Ready nodes n1..nN at 10.100.0.1..N.
func nodes(n int) []runtime.Object {
	var out []runtime.Object
	for i := 1; i <= n; i++ {
		out = append(out, node(fmt.Sprintf("n%d", i), fmt.Sprintf("10.100.0.%d", i)))
	}
	return out
}

func newFake(t *testing.T, objs ...runtime.Object) (*Backend, *fakeCluster) {
	t.Helper()
	f := &fakeCluster{t: t, cs: fake.NewClientset(objs...), nextIP: map[string]int{}, agentAddr: startAgent(t)}
	f.podStatus = f.running
	f.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		p.Status = f.podStatus(p)
		return false, nil, nil
	})
	f.cs.PrependReactor("create", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*corev1.Service)
		f.mu.Lock()
		f.nextSvc++
		s.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", f.nextSvc/250, 10+f.nextSvc%250)
		f.mu.Unlock()
		return false, nil, nil
	})
	f.cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		r.Status.Allowed = true
		return true, r, nil
	})
	b := New(Options{Image: testImage}, "t1", nil)
	b.pid, b.host = 4242, "coordinator"
	b.poll = time.Millisecond
	b.Wait = 5 * time.Second
	b.Connect = func(context.Context) (*Clients, error) {
		return &Clients{Core: f.cs.CoreV1(), Authz: f.cs.AuthorizationV1(), Version: f.cs.Discovery(), Forward: f, Server: "https://fake:6443", Context: "fake"}, nil
	}
	return b, f
}

// running is what a kubelet reports for a pod that runs: an address from
// its node's pod range (the node's own with hostNetwork).
func (f *fakeCluster) running(p *corev1.Pod) corev1.PodStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := strings.TrimPrefix(p.Spec.NodeName, "n")
	ip := "10.100.0." + n
	if !p.Spec.HostNetwork {
		f.nextIP[n]++
		ip = fmt.Sprintf("10.244.%s.%d", n, 1+f.nextIP[n])
	}
	st := corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	return st
}

// startAgent runs a real agent on loopback; every fake port-forward leads there.
func startAgent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = agent.Serve(ctx, "tcp:"+addr, 0)
	}()
	t.Cleanup(func() { cancel(); <-done })
	c := &agent.Client{Network: "tcp", Addr: addr}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := c.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	return addr
}

type fakeTunnel struct{ addr string }

func (t fakeTunnel) Addr() string     { return t.addr }
func (t fakeTunnel) LastError() error { return nil }
func (t fakeTunnel) Close()           {}

// Forward implements Forwarder.
func (f *fakeCluster) Forward(_ context.Context, ns, pod string, port int) (Tunnel, error) {
	f.mu.Lock()
	f.forwards = append(f.forwards, fmt.Sprintf("%s/%s:%d", ns, pod, port))
	f.mu.Unlock()
	return fakeTunnel{f.agentAddr}, nil
}

// writes renders every request that changed the cluster, in order: created
// objects as YAML, patches and deletions as comments.
func (f *fakeCluster) writes() string {
	var b strings.Builder
	for _, a := range f.cs.Actions() {
		res := a.GetResource().Resource
		if a.GetSubresource() != "" {
			res += "/" + a.GetSubresource()
		}
		switch a.GetVerb() {
		case "create":
			if res == "selfsubjectaccessreviews" {
				continue
			}
			y, err := yaml.Marshal(a.(k8stesting.CreateAction).GetObject())
			if err != nil {
				f.t.Fatal(err)
			}
			fmt.Fprintf(&b, "--- # create %s\n%s", res, y)
		case "patch":
			p := a.(k8stesting.PatchAction)
			fmt.Fprintf(&b, "--- # patch %s %s/%s: %s\n", res, p.GetNamespace(), p.GetName(), p.GetPatch())
		case "delete":
			d := a.(k8stesting.DeleteAction)
			fmt.Fprintf(&b, "--- # delete %s %s\n", res, strings.TrimPrefix(d.GetNamespace()+"/"+d.GetName(), "/"))
		case "update":
			fmt.Fprintf(&b, "--- # update %s\n", res)
		}
	}
	return b.String()
}

func (f *fakeCluster) namespaces() []string {
	l, err := f.cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, ns := range l.Items {
		out = append(out, ns.Name)
	}
	sort.Strings(out)
	return out
}

// TestDeployGolden: the exact objects each network and placement creates
// (golden YAML; go test -update rewrites them), where each pod runs and
// what a client dials, then the namespace deleted at teardown.
func TestDeployGolden(t *testing.T) {
	for _, tc := range []struct {
		network   string
		placement ground.Placement
		dial      string // c1 -> the server
		nodes     string
	}{
		{"pod", ground.SameHost, "10.244.1.3:5201", "c1=n1 s1=n1"},
		{"pod", ground.CrossHost, "10.244.2.2:5201", "c1=n1 s2=n2"},
		{"pod", ground.SamePod, "127.0.0.1:5201", "c1=n1 c1-side=n1"},
		{"baseline", ground.SameHost, "10.100.0.1:5201", "c1=n1 s1=n1"},
		{"baseline", ground.CrossHost, "10.100.0.2:5201", "c1=n1 s2=n2"},
		{"host", ground.CrossHost, "10.100.0.2:5201", "c1=n1 s2=n2"},
	} {
		name := tc.network + "-" + string(tc.placement)
		t.Run(name, func(t *testing.T) {
			b, f := newFake(t, nodes(3)...)
			topo, prs := pairs.Topology(tc.network, []ground.Placement{tc.placement}, -1, -1)
			d, err := b.Deploy(context.Background(), topo)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.namespaces(); len(got) != 1 || got[0] != "cnperf-t1" {
				t.Errorf("namespaces %v, want [cnperf-t1]", got)
			}
			ap, err := d.Dial(context.Background(), prs[0].Client, prs[0].Server, "tcp", 5201)
			if err != nil || ap.String() != tc.dial {
				t.Errorf("dial %s -> %s = %v, %v; want %s", prs[0].Client, prs[0].Server, ap, err, tc.dial)
			}
			if got := d.Params()["kubernetes_nodes"]; got != tc.nodes {
				t.Errorf("nodes %v, want %s", got, tc.nodes)
			}
			for _, ps := range topo.Pods {
				if p := d.Pod(ps.Name); p == nil || p.Agent == nil || !p.IP.IsValid() {
					t.Errorf("pod %s: %+v", ps.Name, p)
				}
			}
			if err := d.Teardown(); err != nil {
				t.Fatal(err)
			}
			if err := d.Teardown(); err != nil {
				t.Errorf("second teardown: %v", err)
			}
			if got := f.namespaces(); len(got) != 0 {
				t.Errorf("after teardown: namespaces %v", got)
			}
			golden.Check(t, "deploy-"+name, f.writes())
		})
	}
}

// servicesTopology is what the services experiment asks the backend for.
func servicesTopology(t *testing.T, b backend.Backend, pl ground.Placement) (backend.Topology, []string) {
	t.Helper()
	us, err := services.Services{}.Units(&experiment.Plan{
		Cases: []experiment.Case{{Network: "pod", Placement: pl}}, Workloads: []string{"tcp_rr"},
		LBs: []string{svc.ClusterProxy}, Services: []int{3}, Backend: b,
	}, []string{"tcp_rr"})
	if err != nil || len(us) != 1 {
		t.Fatalf("units %v, %v", us, err)
	}
	var backends []string
	for _, p := range us[0].Topology.Pods {
		if p.Name != "c1" {
			backends = append(backends, p.Name)
		}
	}
	return us[0].Topology, backends
}

// TestServicesGolden: three ClusterIP services in front of the backend
// pods (labelled for them); cross-node, the client alone on its node (on
// two nodes the three backend hosts share the second), same-node all on one.
func TestServicesGolden(t *testing.T) {
	for _, tc := range []struct {
		nodes     int
		placement ground.Placement
		where     string
	}{
		{2, ground.CrossHost, "c1=n1 b1=n2 b2=n2 b3=n2"},
		{3, ground.CrossHost, "c1=n1 b1=n2 b2=n3 b3=n2"},
		{2, ground.SameHost, "c1=n1 b1=n1 b2=n1 b3=n1"},
	} {
		name := fmt.Sprintf("%s-%dnodes", tc.placement, tc.nodes)
		t.Run(name, func(t *testing.T) {
			b, f := newFake(t, nodes(tc.nodes)...)
			var probed []string
			b.probe = func(_ context.Context, d *Deployment, client string, backends []string, set *backend.ServiceSet) error {
				probed = append(probed, client+"->"+set.Target.String()+" via "+strings.Join(backends, ","))
				return nil
			}
			topo, backends := servicesTopology(t, b, tc.placement)
			dep, err := b.Deploy(context.Background(), topo)
			if err != nil {
				t.Fatal(err)
			}
			if got := dep.Params()["kubernetes_nodes"]; got != tc.where {
				t.Errorf("nodes %v, want %s", got, tc.where)
			}
			set, clean, err := dep.(backend.ServiceHost).ProgramServices(context.Background(), svc.ClusterProxy, 3, true, "c1", backends)
			if err != nil {
				t.Fatal(err)
			}
			if clean != nil {
				t.Error("services go with the namespace; want no clean function")
			}
			// the measured service is the last one created
			if set.Target != netip.MustParseAddrPort("10.96.0.13:80") || set.Count != 3 || !strings.HasPrefix(set.Path, "service svc-2 ") {
				t.Errorf("set %+v", set)
			}
			if len(probed) != 1 || probed[0] != "c1->10.96.0.13:80 via b1,b2,b3" {
				t.Errorf("probed %v", probed)
			}
			sl, _ := f.cs.CoreV1().Services("cnperf-t1").List(context.Background(), metav1.ListOptions{})
			if len(sl.Items) != 3 {
				t.Errorf("%d services, want 3", len(sl.Items))
			}
			if _, _, err := dep.(backend.ServiceHost).ProgramServices(context.Background(), "iptables", 1, false, "c1", backends); err == nil || !strings.Contains(err.Error(), "use --lb cluster") {
				t.Errorf("lb iptables on kubernetes: %v", err)
			}
			if err := dep.Teardown(); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "services-"+name, f.writes())
		})
	}
}

// TestErrors: each way a run cannot start is one line naming the fix, and
// leaves no namespace behind.
func TestErrors(t *testing.T) {
	deny := func(verb, res, sub string) func(f *fakeCluster) {
		return func(f *fakeCluster) {
			f.cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
				ra := r.Spec.ResourceAttributes
				r.Status.Allowed = !(ra.Verb == verb && ra.Resource == res && ra.Subresource == sub)
				return true, r, nil
			})
		}
	}
	forbid := func(verb, res string) func(f *fakeCluster) {
		return func(f *fakeCluster) {
			f.cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, "", fmt.Errorf("no"))
			})
			f.cs.PrependReactor(verb, res, func(a k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: res}, "", fmt.Errorf(`User "bob" cannot %s resource %q`, verb, res))
			})
		}
	}
	waiting := func(reason, msg string) func(f *fakeCluster) {
		return func(f *fakeCluster) {
			f.podStatus = func(p *corev1.Pod) corev1.PodStatus {
				return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}
			}
		}
	}
	for _, tc := range []struct {
		name      string
		nodes     int
		placement ground.Placement
		setup     func(f *fakeCluster)
		want      string
		created   bool // a namespace was created (and must have been deleted)
	}{
		{name: "one node for cross-host", nodes: 1, placement: ground.CrossHost,
			want: "the cluster has 1 schedulable node(s) (n1) and cross-host needs 2, one pod per node: add a node, or use --placement same-host"},
		{name: "no nodes", nodes: 0, placement: ground.SameHost, want: "the cluster has no schedulable node"},
		{name: "cordoned and tainted nodes", nodes: 2, placement: ground.CrossHost, setup: func(f *fakeCluster) {
			ctx := context.Background()
			n1, _ := f.cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
			n1.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
			_, _ = f.cs.CoreV1().Nodes().Update(ctx, n1, metav1.UpdateOptions{})
		}, want: "the cluster has 1 schedulable node(s) (n2) and cross-host needs 2"},
		{name: "rbac: portforward denied", nodes: 2, placement: ground.SameHost, setup: deny("create", "pods", "portforward"),
			want: "the kubeconfig's user may not create pods/portforward (RBAC); grant it the role in docs/kubernetes.md (RBAC)"},
		{name: "rbac: namespace create forbidden", nodes: 2, placement: ground.SameHost, setup: forbid("create", "namespaces"),
			want: `forbidden to create namespace cnperf-t1: namespaces is forbidden: User "bob" cannot create resource "namespaces"; grant the kubeconfig's user the role in docs/kubernetes.md (RBAC)`},
		{name: "rbac: pod create forbidden, namespace removed", nodes: 2, placement: ground.SameHost, setup: forbid("create", "pods"),
			want: "forbidden to create pod c1 in cnperf-t1", created: true},
		{name: "unauthorized", nodes: 2, placement: ground.SameHost, setup: func(f *fakeCluster) {
			f.cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewUnauthorized("token expired")
			})
		}, want: "the API server at https://fake:6443 refused the kubeconfig's credentials (Unauthorized); renew them or use another --context"},
		{name: "image pull", nodes: 2, placement: ground.CrossHost,
			setup:   waiting("ErrImagePull", "rpc error: code = NotFound\ndesc = failed to pull and unpack image \"registry.example/cnperf:test\": not found"),
			want:    "node n1 cannot pull --image registry.example/cnperf:test (ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image \"registry.example/cnperf:test\": not found); push it where the nodes pull from, or import it into each node's runtime (docs/kubernetes.md)",
			created: true},
		{name: "image pull backoff", nodes: 2, placement: ground.SameHost, setup: waiting("ImagePullBackOff", "Back-off pulling image"),
			want: "node n1 cannot pull --image registry.example/cnperf:test (ImagePullBackOff: Back-off pulling image)", created: true},
		{name: "image without cnperf", nodes: 2, placement: ground.SameHost,
			setup: waiting("RunContainerError", `exec: "/cnperf": stat /cnperf: no such file or directory`),
			want:  `node n1 cannot run --image registry.example/cnperf:test (RunContainerError: exec: "/cnperf": stat /cnperf: no such file or directory); the image must hold a static cnperf at /cnperf`, created: true},
		{name: "image without cnperf, as containerd ends it", nodes: 2, placement: ground.SameHost, setup: func(f *fakeCluster) {
			f.podStatus = func(p *corev1.Pod) corev1.PodStatus {
				return corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128,
						Message: `failed to create containerd task: OCI runtime create failed: exec: "/cnperf": stat /cnperf: no such file or directory: unknown`}}}}}
			}
		}, want: `node n1 cannot run --image registry.example/cnperf:test (StartError: failed to create containerd task: OCI runtime create failed: exec: "/cnperf": stat /cnperf: no such file or directory: unknown); the image must hold a static cnperf at /cnperf`, created: true},
		{name: "agent exits", nodes: 2, placement: ground.SameHost, setup: func(f *fakeCluster) {
			f.podStatus = func(p *corev1.Pod) corev1.PodStatus {
				return corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2, Message: "flag provided but not defined: -listen"}}}}}
			}
		}, want: "the agent of --image registry.example/cnperf:test exited in pod c1 on node n1 (Error, exit code 2: flag provided but not defined: -listen)", created: true},
		{name: "pods never run", nodes: 2, placement: ground.SameHost, setup: waiting("ContainerCreating", ""),
			want: "pods not running after 100ms (c1 Pending (ContainerCreating), s1 Pending (ContainerCreating)); see kubectl -n cnperf-t1 describe pods", created: true},
		{name: "runtime refuses sandboxes", nodes: 2, placement: ground.SameHost, setup: func(f *fakeCluster) {
			waiting("ContainerCreating", "")(f)
			f.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
				err := f.cs.Tracker().Add(&corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Name: p.Name + ".1", Namespace: p.Namespace},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: p.Name, Namespace: p.Namespace},
					Type:           corev1.EventTypeWarning, Reason: "FailedCreatePodSandBox", Count: 3,
					Message: "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: OCI runtime create failed: runc create failed: unable to start container process: can't get final child's PID from pipe: EOF: unknown",
				})
				return false, nil, err
			})
		}, want: "node n1 cannot create pods (FailedCreatePodSandBox, 3 times: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: OCI runtime create failed: runc create failed: unable to start container process: can't get final child's PID from pipe: EOF: unknown); the node's container runtime refuses them, see its logs", created: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, f := newFake(t, nodes(tc.nodes)...)
			if tc.setup != nil {
				tc.setup(f)
			}
			if tc.name == "pods never run" {
				b.Wait = 100 * time.Millisecond
			}
			topo, _ := pairs.Topology("pod", []ground.Placement{tc.placement}, -1, -1)
			_, err := b.Deploy(context.Background(), topo)
			if err == nil {
				t.Fatal("deployed")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on several lines: %q", err)
			}
			if got := f.namespaces(); len(got) != 0 {
				t.Errorf("left behind: namespaces %v", got)
			}
			w := f.writes()
			if tc.created && !strings.Contains(w, "# delete namespaces cnperf-t1") {
				t.Error("the half-created namespace was not deleted")
			}
			if !tc.created && strings.Contains(w, "# create pods") {
				t.Errorf("pods created before the error:\n%s", w)
			}
			if strings.Contains(tc.want, "schedulable") && strings.Contains(w, "# create") {
				t.Errorf("wrote before refusing the placement:\n%s", w)
			}
		})
	}
}

// TestServiceAccountRace: a namespace's default ServiceAccount comes a
// moment after the namespace, and the admission refuses pods until then:
// that refusal is waited out.
func TestServiceAccountRace(t *testing.T) {
	b, f := newFake(t, nodes(2)...)
	refusals := 3
	f.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if refusals == 0 {
			return false, nil, nil
		}
		refusals--
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "c1",
			errors.New(`error looking up service account cnperf-t1/default: serviceaccount "default" not found`))
	})
	topo, _ := pairs.Topology("pod", []ground.Placement{ground.SameHost}, -1, -1)
	d, err := b.Deploy(context.Background(), topo)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Teardown()
	if refusals != 0 {
		t.Errorf("%d refusals left", refusals)
	}
	if n := strings.Count(f.writes(), "# create pods"); n != 5 {
		t.Errorf("%d pod creations, want 5 (3 refused, then c1 and s1)", n)
	}
}

// TestConnectErrors: no kubeconfig, a missing one, a context it lacks, and
// an API server nobody answers at.
func TestConnectErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("KUBECONFIG", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(cfg, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://`+dead+`", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: here, context: {cluster: c, user: u}}]
current-context: here
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, "--backend kubernetes needs --image"},
		{Options{Image: testImage, Prefix: "Bad_Prefix"}, `--namespace-prefix "Bad_Prefix": use up to 30 lower-case letters`},
		{Options{Image: testImage}, "no kubeconfig: give --kubeconfig FILE (or set KUBECONFIG)"},
		{Options{Image: testImage, Kubeconfig: filepath.Join(dir, "none")}, "--kubeconfig " + filepath.Join(dir, "none") + ": no such file or directory; give the cluster's kubeconfig file"},
		{Options{Image: testImage, Kubeconfig: cfg, Context: "elsewhere"}, `--context elsewhere: context "elsewhere" does not exist; use one of the kubeconfig's contexts (kubectl config get-contexts)`},
		{Options{Image: testImage, Kubeconfig: cfg}, "cannot reach the Kubernetes API server at https://" + dead + " ("},
	} {
		b := New(tc.opts, "t1", nil)
		err := b.Check("pod")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v\nwant one line containing %s", tc.opts, err, tc.want)
		}
		if strings.Contains(tc.want, "cannot reach") && err != nil && !strings.Contains(err.Error(), "connection refused); check that the cluster is up") {
			t.Errorf("unreachable: %v", err)
		}
	}
	if err := New(Options{Image: testImage}, "", nil).Check("calico"); err == nil || !strings.Contains(err.Error(), `no network "calico"; use one of baseline, host, pod`) {
		t.Errorf("unknown network: %v", err)
	}
}

// TestSkips: what a backend cannot do here is a skip with the reason.
func TestSkips(t *testing.T) {
	b, f := newFake(t, nodes(2)...)
	_, err := b.Deploy(context.Background(), backend.Topology{Network: "baseline", Hosts: 1, OwnAddresses: true, Services: true,
		Pods: []backend.PodSpec{{Name: "c1", Host: 1, CPU: -1}}})
	if err == nil || !strings.Contains(err.Error(), "services need a pod network") {
		t.Errorf("services on baseline: %v", err)
	}
	_, err = b.Deploy(context.Background(), backend.Topology{Network: "pod", Hosts: 1, Pods: []backend.PodSpec{{Name: "c1", Host: 1, CPU: 0}}})
	if err == nil || !strings.Contains(err.Error(), "drop --pin") {
		t.Errorf("pinned: %v", err)
	}
	if w := f.writes(); w != "" {
		t.Errorf("wrote %s", w)
	}
}

// TestClean: dead runs' namespaces go, live runs' and other machines'
// stay unless forced, and namespaces without the label are never touched.
func TestClean(t *testing.T) {
	host, _ := os.Hostname()
	ns := func(name, run, h string, pid int) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{AnnotHost: h, AnnotPID: fmt.Sprint(pid)}}}
		if run != "" {
			n.Labels = map[string]string{LabelRun: run}
		}
		return n
	}
	deadPID := 1 << 30 // above any pid_max
	objs := []runtime.Object{
		ns("cnperf-dead", "dead", host, deadPID), ns("cnperf-deads2", "dead", host, deadPID),
		ns("cnperf-live", "live", host, os.Getpid()),
		ns("cnperf-away", "away", "another-machine", deadPID),
		ns("default", "", "", 0),
	}
	b, f := newFake(t, objs...)
	cl, err := b.clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	removed, kept, err := Clean(context.Background(), cl, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].Run != "dead" || len(removed[0].Namespaces) != 2 {
		t.Errorf("removed %+v", removed)
	}
	if len(kept) != 2 || kept[0].Run != "away" || kept[1].Run != "live" {
		t.Errorf("kept %+v", kept)
	}
	if got := strings.Join(f.namespaces(), " "); got != "cnperf-away cnperf-live default" {
		t.Errorf("left %s", got)
	}
	if _, _, err := Clean(context.Background(), cl, "away", true); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.namespaces(), " "); got != "cnperf-live default" {
		t.Errorf("after --id away --force: %s", got)
	}
	if _, _, err := Clean(context.Background(), cl, "", true); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.namespaces(), " "); got != "default" {
		t.Errorf("after --force: %s", got)
	}
}

// TestEnvironment: what the API shows of the cluster, and where it
// shows nothing, unknown with the reason.
func TestEnvironment(t *testing.T) {
	ctx := context.Background()
	proxyCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"},
		Data: map[string]string{"config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"ipvs\"\n"}}
	calico := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "calico-node-x7k2p", Namespace: "kube-system"}}
	b, f := newFake(t, append(nodes(2), proxyCM, calico)...)
	f.cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.2", Platform: "linux/amd64"}
	topo, _ := pairs.Topology("pod", []ground.Placement{ground.SameHost}, -1, -1)
	d, err := b.Deploy(ctx, topo)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Teardown()
	var env result.Environment
	d.Environment(ctx, &env)
	k := env.Kubernetes
	if k == nil || k.Version != "v1.37.2" || k.Platform != "linux/amd64" || k.Server != "https://fake:6443" || k.Image != testImage {
		t.Fatalf("environment %+v", k)
	}
	want := result.KubernetesNode{Name: "n1", InternalIP: "10.100.0.1", KubeletVersion: "v1.37.2", KernelVersion: "6.1.0-test",
		OSImage: "Debian GNU/Linux 12", ContainerRuntime: "containerd://1.6.20", Architecture: "amd64", CPUs: "2", Memory: "4Gi", PodCIDR: "10.244.1.0/24"}
	if len(k.Nodes) != 2 || k.Nodes[0] != want || k.Nodes[1].Name != "n2" {
		t.Errorf("nodes %+v", k.Nodes)
	}
	if k.CNI != "calico (pods kube-system/calico-node*)" {
		t.Errorf("cni %q", k.CNI)
	}
	if k.ProxyMode != "ipvs (ConfigMap kube-system/kube-proxy)" {
		t.Errorf("proxy mode %q", k.ProxyMode)
	}

	cl, _ := b.clients(ctx)
	// what kube-proxy itself says comes first
	modes := map[string]string{"n1": "nftables", "n2": "nftables"}
	cl.NodeProxy = func(_ context.Context, node string, port int, path string) ([]byte, error) {
		if port != ProxyMetricsPort || path != "proxyMode" {
			return nil, fmt.Errorf("asked %d/%s", port, path)
		}
		return []byte(modes[node] + "\n"), nil
	}
	if got := Describe(ctx, cl, testImage).ProxyMode; got != "nftables (kube-proxy /proxyMode)" {
		t.Errorf("proxy mode %q", got)
	}
	modes["n2"] = "iptables"
	if got := Describe(ctx, cl, testImage).ProxyMode; got != "n1=nftables, n2=iptables (kube-proxy /proxyMode)" {
		t.Errorf("mixed proxy modes %q", got)
	}

	// a cluster showing neither
	b2, f2 := newFake(t, nodes(1)...)
	cl2, _ := b2.clients(ctx)
	cl2.NodeProxy = func(context.Context, string, int, string) ([]byte, error) {
		return nil, errors.New("dial tcp 10.100.0.1:10249: connect: connection refused")
	}
	k2 := Describe(ctx, cl2, testImage)
	if k2.CNI != "unknown (no known CNI daemon in kube-system, kube-flannel, calico-system, no node annotation)" {
		t.Errorf("cni %q", k2.CNI)
	}
	if !strings.HasPrefix(k2.ProxyMode, "unknown (n1:10249/proxyMode: dial tcp 10.100.0.1:10249: connect: connection refused; ConfigMap kube-system/kube-proxy: ") {
		t.Errorf("proxy mode %q", k2.ProxyMode)
	}
	// the local cluster's annotation names its CNI
	n1, _ := f2.cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	n1.Annotations = map[string]string{AnnotCNI: "bridge+host-local"}
	_, _ = f2.cs.CoreV1().Nodes().Update(ctx, n1, metav1.UpdateOptions{})
	if got := Describe(ctx, cl2, testImage).CNI; got != "bridge+host-local (node annotation cnperf.cni)" {
		t.Errorf("cni %q", got)
	}
}
