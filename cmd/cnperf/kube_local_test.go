package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/hostsnap"
	"github.com/cnperf/cnperf/internal/testutil"

	"github.com/cnperf/cnperf/internal/result"
)

// KubeLocalEnv turns TestLocalKubernetesCluster on: scripts/test.sh sets it
// once the Kubernetes binaries are in their cache (scripts/kube-build.sh).
const KubeLocalEnv = "CNPERF_KUBE_LOCAL"

// The local cluster's names (`cnperf cluster`, package kubelocal).
const (
	kubeState      = "/run/cnperf/kube"
	kubeConfig     = kubeState + "/admin.kubeconfig"
	kubeCPNetns    = "cnperf-kube-cp"
	kubeAgentImage = "cnperf.local/agent:dev"
	kubeCgroup     = "cnperf-kube"
	kubeVersion    = "v1.37.2" // kube/go.mod's k8s.io/kubernetes
)

// TestLocalKubernetesCluster is issue 15's integration test: it brings up
// the local cluster of `cnperf cluster up --nodes 2` (real
// kube-apiserver, kubelets, kube-proxy in iptables mode), runs tcp_rr,
// tcp_stream and tcp_crr through a ClusterIP same-node and cross-node with
// --backend kubernetes, checks the results and the environment (the real
// kubelet version, the kube-proxy mode), then takes the cluster down and
// checks that nothing of it is left: processes, mounts, cgroups, network
// namespaces, the state folder. Root only, and only with
// CNPERF_KUBE_LOCAL=1 (the binaries take an hour to build cold).
func TestLocalKubernetesCluster(t *testing.T) {
	if os.Getenv(KubeLocalEnv) != "1" {
		t.Skipf("set %s=1 to bring up the local Kubernetes cluster (scripts/test.sh does once scripts/kube-build.sh has built the binaries)", KubeLocalEnv)
	}
	testutil.NeedRoot(t, "the local cluster lives in network namespaces and cgroups")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "scripts", "kube-build.sh"), "--missing").Output()
	if err != nil {
		t.Fatal(err)
	}
	if m := strings.TrimSpace(string(out)); m != "" {
		t.Fatalf("the Kubernetes binaries %s are not built; run scripts/kube-build.sh", m)
	}
	if _, err := os.Stat("/run/netns/cnperf-kube-sw"); err == nil {
		t.Fatal("a local cluster is up already; `cnperf cluster down` first (only one runs at a time)")
	}
	bin := cnperf(t)
	cluster := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, append([]string{"cluster"}, args...)...)
		cmd.Dir = root // the images are built from this source tree
		return cmd
	}

	down := func() {
		if out, err := cluster(context.Background(), "down").CombinedOutput(); err != nil {
			t.Errorf("cnperf cluster down: %v\n%s", err, out)
		}
	}
	isDown := false
	t.Cleanup(func() {
		if !isDown {
			down()
		}
	})

	// issue 34 finding 3: kubelet wrote the host's /var/lib/kubelet (and
	// /var/log/containers), shared by the nodes, left after down
	filesBefore := hostsnap.Files(kubeHostPaths...)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if out, err := cluster(ctx, "up", "--nodes", "2").CombinedOutput(); err != nil {
		t.Fatalf("cnperf cluster up --nodes 2: %v\n%s", err, tail(out, 40))
	}
	t.Logf("cluster up in %v", time.Since(start).Round(time.Second))
	// a second up refuses at once and leaves the running cluster alone
	if out, err := cluster(ctx, "up", "--nodes", "2").CombinedOutput(); err == nil || !strings.Contains(string(out), "already up") {
		t.Errorf("a second cnperf cluster up: %v: %s", err, out)
	}
	if out, err := cluster(ctx, "status").CombinedOutput(); err != nil || !strings.Contains(string(out), "Ready") {
		t.Errorf("cnperf cluster status: %v: %s", err, out)
	}

	// both nodes Ready, with the kubelet built here
	var nodes struct {
		Items []struct {
			Metadata struct{ Name string }
			Spec     struct {
				Taints []struct{ Key, Effect string }
			}
			Status struct {
				Conditions []struct{ Type, Status string }
				NodeInfo   struct{ KubeletVersion string }
			}
		}
	}
	kubectl := func(args ...string) []byte {
		t.Helper()
		out, err := cluster(ctx, append([]string{"kubectl"}, args...)...).Output()
		if err != nil {
			t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	if err := json.Unmarshal(kubectl("get", "nodes", "-o", "json"), &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("%d nodes, want 2", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == "Ready" && c.Status == "True")
		}
		if !ready {
			t.Errorf("node %s not Ready: %+v", n.Metadata.Name, n.Status.Conditions)
		}
		if len(n.Spec.Taints) > 0 {
			t.Errorf("node %s tainted after up: %+v", n.Metadata.Name, n.Spec.Taints)
		}
	}

	// the three workloads through a ClusterIP, same-node and cross-node
	resPath := filepath.Join(t.TempDir(), "kube.json")
	run := exec.CommandContext(ctx, "ip", "netns", "exec", kubeCPNetns, bin, "run", "--backend", "kubernetes",
		"--kubeconfig", kubeConfig, "--image", kubeAgentImage,
		"--workloads", "tcp_rr,tcp_stream,tcp_crr", "--placement", "same-node,cross-node",
		"--lb", "cluster", "--services", "1", "--duration", "1s", "--out", resPath)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	start = time.Now()
	if err := run.Run(); err != nil {
		t.Fatalf("cnperf run --backend kubernetes: %v\n%s", err, tail(stderr.Bytes(), 40))
	}
	t.Logf("run in %v", time.Since(start).Round(time.Second))
	r, err := result.Read(resPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, wl := range []string{"tcp_rr", "tcp_stream", "tcp_crr"} {
		for _, pl := range []string{"same-host", "cross-host"} {
			found := false
			for _, res := range r.Results {
				if res.Workload != wl || res.Placement != pl || res.LB != "cluster" {
					continue
				}
				found = true
				m := res.Metrics
				switch {
				case res.Error != "":
					t.Errorf("%s %s through the ClusterIP: %s", wl, pl, res.Error)
				case wl == "tcp_stream" && (m.ThroughputBps == nil || *m.ThroughputBps <= 0):
					t.Errorf("%s %s through the ClusterIP: no throughput", wl, pl)
				case wl != "tcp_stream" && (m.TransactionsPerS == nil || *m.TransactionsPerS <= 0):
					t.Errorf("%s %s through the ClusterIP: no transactions", wl, pl)
				}
				if !strings.HasPrefix(res.Path, "service ") {
					t.Errorf("%s %s went through %q, not a service", wl, pl, res.Path)
				}
			}
			if !found {
				t.Errorf("no result for %s %s through the ClusterIP (skipped: %+v)", wl, pl, r.Skipped)
			}
		}
	}
	k := r.Environment.Kubernetes
	if k == nil {
		t.Fatal("the result's environment names no Kubernetes cluster")
	}
	if len(k.Nodes) != 2 {
		t.Errorf("environment: %d nodes, want 2", len(k.Nodes))
	}
	for _, n := range k.Nodes {
		if n.KubeletVersion != kubeVersion {
			t.Errorf("environment: node %s kubelet %q, want %s (the one built from kube/go.mod)", n.Name, n.KubeletVersion, kubeVersion)
		}
	}
	if !strings.HasPrefix(k.ProxyMode, "iptables") {
		t.Errorf("environment: kube-proxy mode %q, want iptables", k.ProxyMode)
	}
	if k.Version != kubeVersion {
		t.Errorf("environment: API server %q, want %s", k.Version, kubeVersion)
	}
	if ns := strings.TrimSpace(string(kubectl("get", "namespaces", "-l", "cnperf.run", "-o", "name"))); ns != "" {
		t.Errorf("the run left namespaces: %s", ns)
	}

	// bad input against the real cluster: one line naming the fix, and
	// nothing left on the cluster
	bad := func(name, want string, args ...string) {
		t.Helper()
		start := time.Now()
		base := []string{"netns", "exec", kubeCPNetns, bin, "run", "--backend", "kubernetes", "--quiet",
			"--workloads", "tcp_rr", "--duration", "1s", "--out", filepath.Join(t.TempDir(), "bad.json")}
		cmd := exec.CommandContext(ctx, "ip", append(base, args...)...)
		out, err := cmd.CombinedOutput()
		msg := strings.TrimSpace(string(out))
		switch {
		case err == nil:
			t.Errorf("%s: the run succeeded: %s", name, msg)
		case !strings.Contains(msg, want):
			t.Errorf("%s: error %q, want it to say %q", name, msg, want)
		case strings.Contains(msg, "\n"):
			t.Errorf("%s: more than one line:\n%s", name, msg)
		}
		if ns := strings.TrimSpace(string(kubectl("get", "namespaces", "-l", "cnperf.run", "-o", "name"))); ns != "" {
			t.Errorf("%s: left namespaces: %s", name, ns)
		}
		t.Logf("%s: %s (%v)", name, msg, time.Since(start).Round(100*time.Millisecond))
	}
	bad("no RBAC", "may not create namespaces",
		"--kubeconfig", kubeState+"/norights.kubeconfig", "--image", kubeAgentImage)
	bad("an image without cnperf", "cannot run --image cnperf.local/pause:1",
		"--kubeconfig", kubeConfig, "--image", "cnperf.local/pause:1", "--placement", "same-node")
	kubectl("cordon", "n2")
	bad("cross-node on one schedulable node", "the cluster has 1 schedulable node(s) (n1) and cross-host needs 2",
		"--kubeconfig", kubeConfig, "--image", kubeAgentImage, "--placement", "cross-node")
	kubectl("uncordon", "n2")

	kubePlacement(t, ctx, bin, kubectl, bad)
	kubeRegistry(t, ctx, bin, kubectl, bad)
	t.Run("frozen agent", func(t *testing.T) { kubeFrozenAgent(t, kubectl) })

	start = time.Now()
	down()
	isDown = true
	t.Logf("cluster down in %v", time.Since(start).Round(time.Second))
	for _, left := range kubeLeftovers() {
		t.Errorf("left after down: %s", left)
	}
	for _, d := range hostsnap.Diff(hostsnap.Snapshot{"files": filesBefore}, hostsnap.Snapshot{"files": hostsnap.Files(kubeHostPaths...)}) {
		t.Errorf("the host's files after up and down: %s", d)
	}
}

// kubeHostPaths are where a Kubernetes node writes on its host by
// default; the local cluster's nodes write their own (kubelocal.nodeVar).
var kubeHostPaths = []string{"/var/lib/kubelet", "/var/lib/cni", "/var/log/containers", "/var/log/pods", "/etc/cni", "/etc/kubernetes", "/run/flannel"}

// kubePlacement is issue 24's placement on the real cluster: the nodes
// labelled with two zones, one tainted, each option chooses the nodes it
// says (the result's params name them) or refuses in one line naming the
// nodes and zones it found.
func kubePlacement(t *testing.T, ctx context.Context, bin string, kubectl func(args ...string) []byte, bad func(name, want string, args ...string)) {
	const zone = "topology.kubernetes.io/zone"
	kubectl("label", "--overwrite", "node", "n1", zone+"=zone-a", "node.kubernetes.io/instance-type=local-a")
	kubectl("label", "--overwrite", "node", "n2", zone+"=zone-b", "node.kubernetes.io/instance-type=local-b")
	defer kubectl("label", "node", "n1", "n2", zone+"-", "node.kubernetes.io/instance-type-")
	nodesOf := func(name string, args ...string) (nodes, zones, types string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "placement.json")
		base := []string{"netns", "exec", kubeCPNetns, bin, "run", "--backend", "kubernetes", "--quiet", "--kubeconfig", kubeConfig,
			"--image", kubeAgentImage, "--networks", "pod", "--no-baseline", "--workloads", "tcp_rr", "--duration", "1s", "--out", out}
		cmd := exec.CommandContext(ctx, "ip", append(base, args...)...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", name, err, tail(msg, 5))
			return
		}
		r, err := result.Read(out)
		if err != nil || len(r.Results) == 0 {
			t.Errorf("%s: %v, %d results", name, err, len(r.Results))
			return
		}
		// every round on the same nodes
		pm := r.Results[0].Params
		s := func(k string) string { v, _ := pm[k].(string); return v }
		for _, res := range r.Results {
			if res.Error != "" || fmt.Sprint(res.Params["kubernetes_nodes"]) != s("kubernetes_nodes") {
				t.Errorf("%s: round %d on %v: %s", name, res.Round, res.Params["kubernetes_nodes"], res.Error)
			}
		}
		if k := r.Environment.Kubernetes; k == nil || k.Placement == "" {
			t.Errorf("%s: the environment does not say how the nodes were chosen", name)
		}
		t.Logf("%s: %s, %s, %s", name, s("kubernetes_nodes"), s("kubernetes_zones"), s("kubernetes_instance_types"))
		return s("kubernetes_nodes"), s("kubernetes_zones"), s("kubernetes_instance_types")
	}
	for _, c := range []struct {
		name, nodes, zones string
		args               []string
	}{
		{"--nodes n2,n1", "c1=n2 s2=n1", "c1=zone-b s2=zone-a", []string{"--nodes", "n2,n1", "--placement", "cross-node"}},
		{"--node-selector-client zone-b", "c1=n2 s2=n1", "c1=zone-b s2=zone-a", []string{"--node-selector-client", zone + "=zone-b", "--placement", "cross-node"}},
		{"--node-selector zone-b, same-node", "c1=n2 s1=n2", "c1=zone-b s1=zone-b", []string{"--node-selector", zone + "=zone-b", "--placement", "same-node"}},
		{"--placement cross-zone", "c1=n1 s2=n2", "c1=zone-a s2=zone-b", []string{"--placement", "cross-zone"}},
	} {
		nodes, zones, types := nodesOf(c.name, c.args...)
		if nodes != c.nodes || zones != c.zones || !strings.Contains(types, "local-") {
			t.Errorf("%s: ran on %q in %q (%q); want %q in %q", c.name, nodes, zones, types, c.nodes, c.zones)
		}
	}
	// a tainted node: refused, named with the taint, until tolerated
	kubectl("taint", "node", "n2", "dedicated=perf:NoSchedule")
	defer kubectl("taint", "node", "n2", "dedicated=perf:NoSchedule-")
	bad("cross-zone, the other zone's node tainted", "--placement cross-zone needs nodes in two topology.kubernetes.io/zone values; the schedulable nodes are in zone-a (n1) (not usable: n2 tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule)",
		"--kubeconfig", kubeConfig, "--image", kubeAgentImage, "--networks", "pod", "--placement", "cross-zone")
	bad("--nodes on a tainted node", "--nodes n1,n2: node n2 is tainted dedicated=perf:NoSchedule: add --tolerate dedicated=perf:NoSchedule",
		"--kubeconfig", kubeConfig, "--image", kubeAgentImage, "--networks", "pod", "--nodes", "n1,n2")
	nodes, _, _ := nodesOf("cross-zone, tolerated", "--placement", "cross-zone", "--tolerate", "dedicated=perf:NoSchedule")
	if nodes != "c1=n1 s2=n2" {
		t.Errorf("cross-zone with the taint tolerated ran on %q; want c1=n1 s2=n2", nodes)
	}
	// one zone only: refused with the zone found
	kubectl("label", "--overwrite", "node", "n2", zone+"=zone-a")
	bad("one zone", "--placement cross-zone needs nodes in two topology.kubernetes.io/zone values; the schedulable nodes are in zone-a (n1, n2)",
		"--kubeconfig", kubeConfig, "--image", kubeAgentImage, "--networks", "pod", "--placement", "cross-zone", "--tolerate", "dedicated=perf:NoSchedule")
}

// kubeRegistry is issue 24's agent image from a registry: Debian's
// docker-registry on the control-plane host (`cnperf cluster up` points
// the nodes' containerd at it: 127.0.0.1:5000 mirrored to the control
// plane's address, and 10.100.0.250:5001 with htpasswd authentication),
// `cnperf image push` from there, then runs whose nodes pull the image
// instead of using the imported one; the authenticated registry only with
// --image-pull-secret.
func kubeRegistry(t *testing.T, ctx context.Context, bin string, kubectl func(args ...string) []byte, bad func(name, want string, args ...string)) {
	reg, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Error("the registry part needs Debian's docker-registry (scripts/install-deps.sh installs it)")
		return
	}
	// the image carries a static cnperf of this tree
	dir := t.TempDir()
	agent := filepath.Join(dir, "cnperf-static")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", agent, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a static cnperf: %v: %s", err, out)
	}
	const (
		user = "cnperf"
		pass = "s3cret-test"
		hash = "cnperf:$2y$05$psgGtojSqYGzySKiQUCwW.Emn5C8VLdcdSs3hcIqsngn7IBjqfrCS" // htpasswd -Bbn cnperf s3cret-test
	)
	os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(hash+"\n"), 0o600)
	var logs []string
	for _, r := range []struct {
		port int
		auth string
	}{{5000, ""}, {5001, "auth: {htpasswd: {realm: cnperf-test, path: " + dir + "/htpasswd}}\n"}} {
		cfg := filepath.Join(dir, fmt.Sprintf("registry-%d.yml", r.port))
		os.WriteFile(cfg, []byte(fmt.Sprintf("version: 0.1\nlog: {level: info}\nstorage: {filesystem: {rootdirectory: %s/data-%d}}\nhttp: {addr: \":%d\"}\n%s",
			dir, r.port, r.port, r.auth)), 0o600)
		logPath := filepath.Join(dir, fmt.Sprintf("registry-%d.log", r.port))
		logs = append(logs, logPath)
		lf, _ := os.Create(logPath)
		cmd := exec.Command("ip", "netns", "exec", kubeCPNetns, reg, "serve", cfg)
		cmd.Stdout, cmd.Stderr = lf, lf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cmd.Process.Kill()
			cmd.Wait()
			lf.Close()
		}()
	}
	time.Sleep(time.Second)
	inCP := func(env []string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", kubeCPNetns}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		return cmd.CombinedOutput()
	}
	tag := "t" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	open := "127.0.0.1:5000/cnperf-agent:" + tag
	if out, err := inCP(nil, bin, "image", "push", open, "--binary", agent); err != nil {
		t.Fatalf("cnperf image push %s: %v: %s", open, err, out)
	} else {
		t.Logf("%s", strings.TrimSpace(string(out)))
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, ".docker"), 0o700)
	os.WriteFile(filepath.Join(home, ".docker", "config.json"), []byte(fmt.Sprintf(`{"auths": {"10.100.0.250:5001": {"auth": %q}}}`,
		base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))), 0o600)
	private := "10.100.0.250:5001/cnperf-agent:" + tag
	if out, err := inCP([]string{"HOME=" + home, "DOCKER_CONFIG=" + filepath.Join(home, ".docker")}, bin, "image", "push", private, "--binary", agent); err != nil {
		t.Fatalf("cnperf image push %s: %v: %s", private, err, out)
	}

	run := func(name string, args ...string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "pulled.json")
		base := []string{"netns", "exec", kubeCPNetns, bin, "run", "--backend", "kubernetes", "--quiet", "--kubeconfig", kubeConfig,
			"--networks", "pod", "--no-baseline", "--workloads", "tcp_rr", "--duration", "1s", "--placement", "cross-node", "--out", out}
		if msg, err := exec.CommandContext(ctx, "ip", append(base, args...)...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", name, err, tail(msg, 5))
			return
		}
		r, err := result.Read(out)
		if err != nil || len(r.Results) == 0 {
			t.Errorf("%s: %v, %d results", name, err, len(r.Results))
			return
		}
		for _, res := range r.Results {
			if res.Error != "" {
				t.Errorf("%s: round %d: %s", name, res.Round, res.Error)
			}
		}
	}
	run("pulled through 127.0.0.1:5000", "--image", open)
	bad("a private registry without the secret", "cannot pull --image "+private,
		"--kubeconfig", kubeConfig, "--image", private, "--networks", "pod", "--placement", "same-node")
	kubectl("-n", "default", "create", "secret", "docker-registry", "cnperf-regcred", "--docker-server=10.100.0.250:5001",
		"--docker-username="+user, "--docker-password="+pass)
	defer kubectl("-n", "default", "delete", "secret", "cnperf-regcred")
	run("pulled with --image-pull-secret", "--image", private, "--image-pull-secret", "cnperf-regcred")

	// both pulled by the nodes (10.100.0.N), not only pushed from the control plane
	for i, l := range logs {
		b, _ := os.ReadFile(l)
		pulled := 0
		for _, line := range strings.Split(string(b), "\n") {
			// the nodes' containerd asks with its own user agent (HEAD by tag, then GET by digest)
			if strings.Contains(line, "/v2/cnperf-agent/manifests/"+tag) && strings.Contains(line, "containerd") {
				pulled++
			}
		}
		if pulled == 0 {
			t.Errorf("registry :%d: no node pulled the image; its log:\n%s", 5000+i, tail(b, 20))
		}
	}
}

// kubeFrozenAgent is issue 23's frozen agent on the real cluster: once
// round 1 shows, the server pod's agent process is stopped (SIGSTOP, from
// this host: a node's containers are processes here, found by the pod's
// cgroup). The pod still runs as far as the API says, so each cell fails
// at its deadline (README: the client's report within d + 2 × (10 s +
// d/4), 23 s for a 2 s cell) and the run ends by itself, exits 4 naming
// the failed cells, keeps every cell in a valid file and leaves no
// namespace.
func kubeFrozenAgent(t *testing.T, kubectl func(args ...string) []byte) {
	c := startChaosIn(t, "kf", filepath.Join(t.TempDir(), "frozen.json"), nil, []string{"ip", "netns", "exec", kubeCPNetns},
		"--backend", "kubernetes", "--kubeconfig", kubeConfig, "--image", kubeAgentImage, "--networks", "pod", "--no-baseline",
		"--workloads", "tcp_rr,tcp_stream", "--duration", "2s", "--repeat", "2", "--placement", "cross-node")
	defer func() { // whatever happened, nothing of the run stays on the cluster
		kubectl("delete", "namespaces", "-l", "cnperf.run="+c.id, "--wait=false", "--ignore-not-found")
	}()
	c.waitLine("round 1", 3*time.Minute)
	time.Sleep(500 * time.Millisecond) // mid-cell
	var pods struct {
		Items []struct {
			Metadata struct{ Name, UID string }
		}
	}
	if err := json.Unmarshal(kubectl("get", "pods", "-A", "-l", "cnperf.run="+c.id, "-o", "json"), &pods); err != nil {
		t.Fatal(err)
	}
	server, uid := "", ""
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Metadata.Name, "s") { // cross-node: s2, on host 2
			server, uid = p.Metadata.Name, p.Metadata.UID
		}
	}
	if uid == "" {
		t.Fatalf("no server pod of run %s among %+v", c.id, pods.Items)
	}
	pids := kubePodAgents(uid)
	if len(pids) == 0 {
		t.Fatalf("no agent process in the cgroup of pod %s (uid %s)", server, uid)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	}
	t.Logf("stopped the agent of pod %s: pids %v", server, pids)
	// four cells of 2 s, each ending at its deadline (23 s), the
	// namespaces' removal after
	c.wait(4*time.Minute, 4, "failed: 4 of 4 measurements", "server on "+server)
	r := c.results(4)
	if r.Incomplete || r.CellsDone != 4 {
		t.Errorf("file: incomplete %v, cells done %d; want a complete run of 4", r.Incomplete, r.CellsDone)
	}
	for _, res := range r.Results {
		if res.Error == "" {
			t.Errorf("round %d %s measured with its server stopped", res.Round, res.Workload)
		}
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGCONT)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ns := strings.TrimSpace(string(kubectl("get", "namespaces", "-l", "cnperf.run="+c.id, "-o", "name")))
		if ns == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the run left namespaces: %s", ns)
			break
		}
		time.Sleep(2 * time.Second)
	}
}

// kubePodAgents are the cnperf agent processes of the pod with uid: those
// in its cgroup (kubelet names it pod<uid>, with dashes or, for systemd,
// underscores) whose program is the image's /cnperf.
func kubePodAgents(uid string) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cg, err := os.ReadFile(p + "/cgroup")
		if err != nil || !strings.Contains(string(cg), "pod"+uid) && !strings.Contains(string(cg), "pod"+strings.ReplaceAll(uid, "-", "_")) {
			continue
		}
		cmdline, _ := os.ReadFile(p + "/cmdline")
		if argv := strings.Split(string(cmdline), "\x00"); argv[0] == "/cnperf" {
			pid, _ := strconv.Atoi(filepath.Base(p))
			out = append(out, pid)
		}
	}
	return out
}

// kubeLeftovers lists what of the local cluster is still there: its
// network namespaces, cgroups, state folder, processes (a command line or
// working folder under the state folder or the binaries' cache) and
// mounts.
func kubeLeftovers() []string {
	var out []string
	if ms, _ := filepath.Glob("/run/netns/cnperf-kube-*"); len(ms) > 0 {
		out = append(out, "network namespaces "+strings.Join(ms, " "))
	}
	cgs, _ := filepath.Glob("/sys/fs/cgroup/*/" + kubeCgroup)
	if cg, err := os.Stat("/sys/fs/cgroup/" + kubeCgroup); err == nil && cg.IsDir() {
		cgs = append(cgs, "/sys/fs/cgroup/"+kubeCgroup)
	}
	if len(cgs) > 0 {
		out = append(out, "cgroups "+strings.Join(cgs, " "))
	}
	if _, err := os.Stat(kubeState); err == nil {
		out = append(out, "state folder "+kubeState)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmd, err := os.ReadFile(p + "/cmdline")
		if err != nil {
			continue
		}
		line := strings.ReplaceAll(string(cmd), "\x00", " ")
		cwd, _ := os.Readlink(p + "/cwd")
		if strings.Contains(line, kubeState) || strings.Contains(line, "/kube-"+kubeVersion+"/") || strings.HasPrefix(cwd, kubeState) {
			out = append(out, "process "+filepath.Base(p)+": "+line)
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, l := range strings.Split(string(mi), "\n") {
			if strings.Contains(l, kubeState) || strings.Contains(l, "cnperf-kube") {
				out = append(out, "mount "+l)
			}
		}
	}
	return out
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestLocalKubernetesClusterFlannel is issue 24's: the local cluster on
// real Flannel (`cnperf cluster up --nodes 2 --cni flannel-vxlan`): both
// nodes Ready on flanneld's leases, the VXLAN device flannel.1 on each
// node, tcp_rr and tcp_stream cross-node over the pod network with the
// environment naming Flannel, then down with nothing left. Root only,
// with CNPERF_KUBE_LOCAL=1 and flanneld built (scripts/flannel-build.sh).
func TestLocalKubernetesClusterFlannel(t *testing.T) {
	bin, cluster, markDown := localCluster(t, t.Skipf, "kube-build.sh", "flannel-build.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	if out, err := cluster(ctx, "up", "--nodes", "2", "--cni", "flannel-vxlan").CombinedOutput(); err != nil {
		t.Fatalf("cnperf cluster up --nodes 2 --cni flannel-vxlan: %v\n%s", err, tail(out, 40))
	}
	t.Logf("cluster up in %v", time.Since(start).Round(time.Second))
	for _, n := range []string{"n1", "n2"} {
		out, err := exec.Command("ip", "-n", "cnperf-kube-"+n, "-d", "link", "show", "flannel.1").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "vxlan id 1 ") || !strings.Contains(string(out), "dstport 8472") {
			t.Errorf("node %s: no flannel.1 of VNI 1 on port 8472: %v\n%s", n, err, out)
		}
	}
	resPath := filepath.Join(t.TempDir(), "flannel.json")
	run := exec.CommandContext(ctx, "ip", "netns", "exec", kubeCPNetns, bin, "run", "--backend", "kubernetes",
		"--kubeconfig", kubeConfig, "--image", kubeAgentImage, "--networks", "pod", "--no-baseline",
		"--workloads", "tcp_rr,tcp_stream", "--placement", "cross-node", "--duration", "1s", "--out", resPath)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("cnperf run --backend kubernetes: %v\n%s", err, tail(out, 40))
	}
	r, err := result.Read(resPath)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]bool{}
	for _, res := range r.Results {
		if res.Error != "" {
			t.Errorf("%s over Flannel: %s", res.Workload, res.Error)
		}
		measured[res.Workload] = true
	}
	if !measured["tcp_rr"] || !measured["tcp_stream"] {
		t.Errorf("measured %v, want tcp_rr and tcp_stream", measured)
	}
	if k := r.Environment.Kubernetes; k == nil || !strings.Contains(k.CNI, "flannel") {
		t.Errorf("the environment does not name Flannel: %+v", k)
	}
	if out, err := cluster(context.Background(), "down").CombinedOutput(); err != nil {
		t.Fatalf("cnperf cluster down: %v\n%s", err, out)
	}
	markDown()
	for _, left := range kubeLeftovers() {
		t.Errorf("left after down: %s", left)
	}
}

// TestLocalKubernetesClusterCilium is issue 32's: the local cluster on
// real Cilium v1.20.2 with kube-proxy replaced, in native routing (`cnperf
// cluster up --nodes 2 --cni cilium --kube-proxy-replacement --cni-opt
// routing=native`): both nodes Ready with a healthy agent each (cilium-dbg
// status in `cnperf cluster status`), no kube-proxy running, pods on two
// nodes reaching each other over Cilium's datapath and a ClusterIP served
// by Cilium (tcp_rr and tcp_crr through it, cross-node), the environment
// naming Cilium's systems; then down, after which no Cilium program,
// cgroup hook, pin, interface, mount or process is left on the host.
// Root only, with CNPERF_KUBE_LOCAL=1 and Cilium built
// (scripts/cilium-build.sh).
func TestLocalKubernetesClusterCilium(t *testing.T) {
	bin, cluster, markDown := localCluster(t, t.Fatalf, "kube-build.sh", "cilium-build.sh")
	_, runCiliumBefore := os.Stat("/run/cilium")
	progsBefore := ciliumProgs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	up := []string{"up", "--nodes", "2", "--cni", "cilium", "--kube-proxy-replacement", "--cni-opt", "routing=native"}
	if out, err := cluster(ctx, up...).CombinedOutput(); err != nil {
		t.Fatalf("cnperf cluster %s: %v\n%s", strings.Join(up, " "), err, tail(out, 60))
	}
	t.Logf("cluster up in %v", time.Since(start).Round(time.Second))
	out, err := cluster(ctx, "status").CombinedOutput()
	if err != nil {
		t.Errorf("cnperf cluster status: %v\n%s", err, out)
	}
	for _, n := range []string{"n1", "n2"} {
		if !strings.Contains(string(out), "cilium-dbg status on "+n) {
			t.Errorf("cnperf cluster status shows no cilium-dbg status of %s:\n%s", n, out)
		}
	}
	if c := strings.Count(string(out), "KubeProxyReplacement:"); c < 2 || strings.Count(string(out), "Cilium:                  Ok") < 2 {
		t.Errorf("cilium-dbg status: want both agents Ok with kube-proxy replacement:\n%s", out)
	}
	if ps, _ := exec.Command("pgrep", "-f", "/kube-proxy --config").Output(); len(strings.TrimSpace(string(ps))) > 0 {
		t.Errorf("kube-proxy runs (pids %s) though Cilium replaces it", strings.TrimSpace(string(ps)))
	}
	// Cilium's programs run on the nodes' interfaces, not on the host's
	for _, n := range []string{"n1", "n2"} {
		out, err := exec.Command("ip", "-n", "cnperf-kube-"+n, "-br", "link").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "cilium_host") {
			t.Errorf("node %s has no cilium_host: %v\n%s", n, err, out)
		}
	}
	if out, _ := exec.Command("ip", "-br", "link").Output(); strings.Contains(string(out), "cilium") {
		t.Errorf("a Cilium interface in the host's namespace:\n%s", out)
	}
	resPath := filepath.Join(t.TempDir(), "cilium.json")
	run := exec.CommandContext(ctx, "ip", "netns", "exec", kubeCPNetns, bin, "run", "--backend", "kubernetes",
		"--kubeconfig", kubeConfig, "--image", kubeAgentImage, "--networks", "pod", "--no-baseline", "--lb", "none,cluster",
		"--workloads", "tcp_rr,tcp_crr", "--placement", "cross-node", "--duration", "1s", "--out", resPath)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("cnperf run --backend kubernetes --lb none,cluster: %v\n%s", err, tail(out, 40))
	}
	r, err := result.Read(resPath)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]bool{}
	for _, res := range r.Results {
		if res.Error != "" {
			t.Errorf("%s lb=%s over Cilium: %s", res.Workload, res.LB, res.Error)
			continue
		}
		measured[res.Workload+" lb="+res.LB] = true
	}
	for _, want := range []string{"tcp_rr lb=none", "tcp_rr lb=cluster", "tcp_crr lb=none", "tcp_crr lb=cluster"} {
		if !measured[want] {
			t.Errorf("not measured: %s (measured %v)", want, measured)
		}
	}
	k := r.Environment.Kubernetes
	if k == nil || !strings.Contains(k.CNI, "cilium") || k.Systems[result.SystemPodNetwork] != "cilium native-routing" || k.Systems[result.SystemServiceProxy] != "cilium socket-lb" {
		t.Errorf("the environment does not name Cilium's systems: %+v", k)
	}
	if out, err := cluster(context.Background(), "down").CombinedOutput(); err != nil {
		t.Fatalf("cnperf cluster down: %v\n%s", err, out)
	}
	markDown()
	for _, left := range kubeLeftovers() {
		t.Errorf("left after down: %s", left)
	}
	if left := ciliumProgs(t); len(left) > len(progsBefore) {
		t.Errorf("Cilium's BPF programs still loaded after down: %v (before up: %v)", left, progsBefore)
	}
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), "/run/cnperf-cgroup2") || strings.Contains(string(mi), " /run/cilium ") {
		t.Errorf("a mount of the cluster's left on the host:\n%s", mi)
	}
	if _, err := os.Stat("/run/cilium"); err == nil && runCiliumBefore != nil {
		t.Errorf("/run/cilium left on the host (it was not there before up)")
	}
}

// ciliumProgs lists the loaded BPF programs whose names are Cilium's
// (cil_*), as `bpftool prog show` names them.
func ciliumProgs(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("bpftool", "prog", "show").Output()
	if err != nil {
		t.Fatalf("bpftool prog show: %v", err)
	}
	var progs []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "name" && strings.HasPrefix(f[i+1], "cil_") {
				progs = append(progs, f[i+1])
			}
		}
	}
	return progs
}

// localCluster is the start of a test of the local cluster on a real CNI:
// it needs CNPERF_KUBE_LOCAL=1, root, what scripts builds (notBuilt is
// called, t.Skipf or t.Fatalf, when one is missing) and no cluster up. It
// returns the cnperf binary, `cnperf cluster ARGS` run in the source tree
// (the images are built from it), and markDown, which the test calls once
// it has taken the cluster down itself; otherwise the test's cleanup does.
func localCluster(t *testing.T, notBuilt func(format string, args ...any), scripts ...string) (string, func(context.Context, ...string) *exec.Cmd, func()) {
	t.Helper()
	if os.Getenv(KubeLocalEnv) != "1" {
		t.Skipf("set %s=1 to bring up the local Kubernetes cluster", KubeLocalEnv)
	}
	testutil.NeedRoot(t, "the local cluster lives in network namespaces and cgroups")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, script := range scripts {
		out, err := exec.Command(filepath.Join(root, "scripts", script), "--missing").Output()
		if err != nil {
			t.Fatal(err)
		}
		if m := strings.TrimSpace(string(out)); m != "" {
			notBuilt("%s not built; run scripts/%s", m, script)
		}
	}
	if _, err := os.Stat("/run/netns/cnperf-kube-sw"); err == nil {
		t.Fatal("a local cluster is up already; `cnperf cluster down` first (only one runs at a time)")
	}
	bin := cnperf(t)
	cluster := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, append([]string{"cluster"}, args...)...)
		cmd.Dir = root
		return cmd
	}
	isDown := false
	t.Cleanup(func() {
		if !isDown {
			_ = cluster(context.Background(), "down").Run()
		}
	})
	return bin, cluster, func() { isDown = true }
}
