package dockerengine

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEngine is an Engine API on a unix socket: it answers from a table of
// containers and networks and records every request.
type fakeEngine struct {
	t          *testing.T
	apiVersion string // the engine's newest (and default) API version
	minAPI     string // its oldest; "" answers every version, as old engines did
	mu         sync.Mutex
	reqs       []string // "METHOD /path?query"
	containers []ContainerSummary
	networks   []NetworkSummary
	importErr  string
	bodies     map[string]string // the last JSON body sent to each path
	clientCN   string            // the TLS client certificate's name, when one came
	statuses   []int             // the answer to each of reqs
	images     []ImageSummary
	created    map[string]ContainerConfig // by container id
	started    map[string]bool
}

// statusWriter keeps the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (f *fakeEngine) serve(t *testing.T) *Engine {
	t.Helper()
	sock := f.listen(t)
	e, err := New("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// listen serves the fake engine on a unix socket of a temp folder.
func (f *fakeEngine) listen(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f.serveOn(t, ln)
	return sock
}

// serveOn serves the fake engine on ln until the test ends.
func (f *fakeEngine) serveOn(t *testing.T, ln net.Listener) {
	srv := &http.Server{Handler: f, ErrorLog: log.New(io.Discard, "", 0)} // refused handshakes are the point
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
}

// matches applies the engine's label filter to labels.
func matches(filters string, labels map[string]string) bool {
	var f map[string][]string
	if filters == "" {
		return true
	}
	_ = json.Unmarshal([]byte(filters), &f)
	for _, want := range f["label"] {
		k, v, hasV := strings.Cut(want, "=")
		got, ok := labels[k]
		if !ok || (hasV && got != v) {
			return false
		}
	}
	return true
}

func (f *fakeEngine) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
	defer func() { f.statuses = append(f.statuses, w.status) }()
	f.reqs = append(f.reqs, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		f.clientCN = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	w.Header().Set("Api-Version", f.apiVersion)
	path := r.URL.Path
	v := f.apiVersion // an unversioned request is served at the newest
	if i := strings.Index(path[1:], "/"); strings.HasPrefix(path, "/v1.") && i > 0 {
		// the engine's version middleware, word for word
		v = path[2 : i+1]
		path = path[i+1:]
		if f.minAPI != "" && versionLess(v, f.minAPI) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"client version `+v+` is too old. Minimum supported API version is `+f.minAPI+`, please upgrade your client to a newer version"}`)
			return
		}
		if versionLess(f.apiVersion, v) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"client version `+v+` is too new. Maximum supported API version is `+f.apiVersion+`"}`)
			return
		}
	}
	filters := r.URL.Query().Get("filters")
	if r.Method == "POST" && r.ContentLength != 0 && !strings.HasPrefix(path, "/images/") && r.Header.Get("Content-Type") != "application/json" {
		// httputils.CheckForJSON
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"message":"unsupported Content-Type header (`+r.Header.Get("Content-Type")+`): must be 'application/json'"}`)
		return
	}
	if r.Header.Get("Content-Type") == "application/json" {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if f.bodies == nil {
			f.bodies = map[string]string{}
		}
		f.bodies[path] = string(b)
	}
	switch {
	case path == "/_ping":
		_, _ = io.WriteString(w, "OK")
	case path == "/version":
		_ = json.NewEncoder(w).Encode(map[string]string{"Version": "test", "ApiVersion": f.apiVersion, "MinAPIVersion": f.minAPI})
	case r.Method == "GET" && path == "/containers/json":
		out := []ContainerSummary{}
		for _, c := range f.containers {
			if matches(filters, c.Labels) {
				out = append(out, c)
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	case r.Method == "GET" && path == "/networks":
		out := []NetworkSummary{}
		for _, n := range f.networks {
			if matches(filters, n.Labels) {
				out = append(out, n)
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	case r.Method == "DELETE" && strings.HasPrefix(path, "/containers/"):
		id := strings.TrimPrefix(path, "/containers/")
		for i, c := range f.containers {
			if c.ID == id {
				f.containers = append(f.containers[:i], f.containers[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"No such container: `+id+`"}`)
	case r.Method == "DELETE" && strings.HasPrefix(path, "/networks/"):
		id := strings.TrimPrefix(path, "/networks/")
		for i, n := range f.networks {
			if n.ID == id {
				f.networks = append(f.networks[:i], f.networks[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
	case r.Method == "POST" && path == "/containers/create":
		var c ContainerConfig
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.Image == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"bad config"}`)
			return
		}
		id := "c-" + r.URL.Query().Get("name")
		f.containers = append(f.containers, ContainerSummary{ID: id, Labels: c.Labels})
		if f.created == nil {
			f.created = map[string]ContainerConfig{}
		}
		f.created[id] = c
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"Id": id, "Warnings": []string{}})
	case r.Method == "POST" && path == "/networks/create":
		var n NetworkConfig
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil || n.Name == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ns := NetworkSummary{ID: "n-" + n.Name, Name: n.Name, Driver: n.Driver, Labels: n.Labels}
		ns.IPAM.Config = append(ns.IPAM.Config, struct{ Subnet, Gateway string }{"172.18.0.0/16", "172.18.0.1"})
		f.networks = append(f.networks, ns)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"Id": "n-" + n.Name})
	case r.Method == "POST" && path == "/images/create":
		b, _ := io.ReadAll(r.Body)
		if len(b) == 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if f.importErr != "" {
			// API 1.48 deprecated "error"; a newer engine may send only
			// errorDetail
			e := `{"errorDetail":{"message":"` + f.importErr + `"}}`
			if versionLess(f.apiVersion, "1.48") {
				e = `{"errorDetail":{"message":"` + f.importErr + `"},"error":"` + f.importErr + `"}`
			}
			_, _ = io.WriteString(w, `{"status":"importing"}`+"\n"+e+"\n")
			return
		}
		q := r.URL.Query()
		im := ImageSummary{ID: "sha256:abc", RepoTags: []string{q.Get("repo") + ":" + q.Get("tag")}, Labels: map[string]string{}}
		for _, c := range q["changes"] {
			if kv, ok := strings.CutPrefix(c, "LABEL "); ok {
				k, v, _ := strings.Cut(kv, "=")
				im.Labels[k] = v
			}
		}
		f.images = append(f.images, im)
		_, _ = io.WriteString(w, `{"status":"sha256:abc"}`+"\n")
	case r.Method == "GET" && strings.HasSuffix(path, "/logs"):
		// two frames, stdout then stderr
		var b bytes.Buffer
		for i, s := range []string{"hello\n", "oops\n"} {
			b.Write([]byte{byte(i + 1), 0, 0, 0, 0, 0, 0, byte(len(s))})
			b.WriteString(s)
		}
		_, _ = w.Write(b.Bytes())
	default:
		f.serveMore(w, r, path, v, filters)
	}
}

// serveMore answers the rest of the calls cnperf makes, shaped as API
// version v shapes them.
func (f *fakeEngine) serveMore(w http.ResponseWriter, r *http.Request, path, v, filters string) {
	notFound := func(what string) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"No such `+what+`"}`)
	}
	findImage := func(ref string) int {
		for i, im := range f.images {
			if im.ID == ref || slices.Contains(im.RepoTags, ref) {
				return i
			}
		}
		return -1
	}
	switch {
	case r.Method == "GET" && path == "/info":
		in := map[string]any{"Driver": "overlay2", "CgroupDriver": "systemd", "IPv4Forwarding": true,
			"SecurityOptions": []string{"name=seccomp,profile=builtin"}, "Swarm": map[string]any{"LocalNodeState": "inactive"}}
		if versionLess(v, "1.50") { // omitted from 1.50 on
			in["BridgeNfIptables"], in["BridgeNfIp6tables"] = true, true
		}
		_ = json.NewEncoder(w).Encode(in)
	case r.Method == "GET" && path == "/images/json":
		out := []ImageSummary{}
		for _, im := range f.images {
			if matches(filters, im.Labels) {
				out = append(out, im)
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	case r.Method == "GET" && strings.HasPrefix(path, "/images/") && strings.HasSuffix(path, "/json"):
		if i := findImage(strings.TrimSuffix(strings.TrimPrefix(path, "/images/"), "/json")); i >= 0 {
			_ = json.NewEncoder(w).Encode(map[string]string{"Id": f.images[i].ID})
			return
		}
		notFound("image")
	case r.Method == "DELETE" && strings.HasPrefix(path, "/images/"):
		if i := findImage(strings.TrimPrefix(path, "/images/")); i >= 0 {
			f.images = slices.Delete(f.images, i, i+1)
			_, _ = io.WriteString(w, `[{"Deleted":"sha256:abc"}]`)
			return
		}
		notFound("image")
	case r.Method == "POST" && strings.HasPrefix(path, "/containers/") && strings.HasSuffix(path, "/start"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/containers/"), "/start")
		if _, ok := f.created[id]; !ok {
			notFound("container")
			return
		}
		if f.started == nil {
			f.started = map[string]bool{}
		}
		f.started[id] = true
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "GET" && strings.HasPrefix(path, "/containers/") && strings.HasSuffix(path, "/json"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/containers/"), "/json")
		c, ok := f.created[id]
		if !ok {
			notFound("container")
			return
		}
		ns := map[string]any{
			"Networks": map[string]any{c.HostConfig.NetworkMode: map[string]string{"IPAddress": "172.18.0.2", "Gateway": "172.18.0.1"}},
			"Ports":    map[string]any{},
		}
		for port, bs := range c.HostConfig.PortBindings {
			ns["Ports"].(map[string]any)[port] = []map[string]string{{"HostIp": bs[0].HostIP, "HostPort": "32768"}}
		}
		if versionLess(v, "1.52") { // the old top-level fields, dropped at 1.52
			ns["IPAddress"], ns["Gateway"] = "172.18.0.2", "172.18.0.1"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Id": id, "Name": "/" + id, "Image": "sha256:abc",
			"State":  map[string]any{"Running": f.started[id], "Pid": 4242},
			"Config": map[string]any{"Labels": c.Labels}, "NetworkSettings": ns})
	case r.Method == "GET" && strings.HasPrefix(path, "/networks/"):
		id := strings.TrimPrefix(path, "/networks/")
		for _, n := range f.networks {
			if n.ID == id || n.Name == id {
				_ = json.NewEncoder(w).Encode(n)
				return
			}
		}
		notFound("network")
	case r.Method == "POST" && path == "/swarm/init":
		_, _ = io.WriteString(w, `"node-1"`)
	case r.Method == "POST" && path == "/swarm/join":
		w.WriteHeader(http.StatusOK)
	case r.Method == "GET" && path == "/swarm":
		_, _ = io.WriteString(w, `{"ID":"swarm","JoinTokens":{"Worker":"SWMTKN-worker","Manager":"SWMTKN-manager"}}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"page not found"}`)
	}
}

// TestCallsOnEngines: every call cnperf makes goes through against an
// engine answering as Engine 20.10 does and as Engine 29 does, at the
// version negotiated, and reads what each answers.
func TestCallsOnEngines(t *testing.T) {
	for _, eng := range []struct{ name, max, min string }{
		{"engine 20.10", "1.41", "1.12"},
		{"engine 29.0", "1.52", "1.44"},
	} {
		t.Run(eng.name, func(t *testing.T) {
			f := &fakeEngine{t: t, apiVersion: eng.max, minAPI: eng.min}
			e := f.serve(t)
			ctx := context.Background()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(e.Negotiate(ctx))
			in, err := e.EngineInfo(ctx)
			must(err)
			if in.Driver != "overlay2" || (in.BridgeNfIptables == nil) != !versionLess(e.Version, "1.50") {
				t.Errorf("info %+v at %s", in, e.Version)
			}
			ok, err := e.ImageExists(ctx, "cnperf-agent:abc")
			must(err)
			if ok {
				t.Fatal("an image exists before its import")
			}
			must(e.ImportImage(ctx, "cnperf-agent:abc", []string{"LABEL " + LabelAgent + "=1"}, strings.NewReader("tar")))
			imgs, err := e.Images(ctx, LabelAgent)
			must(err)
			if ok, _ := e.ImageExists(ctx, "cnperf-agent:abc"); !ok || len(imgs) != 1 {
				t.Fatalf("after import: exists %v, labelled images %v", ok, imgs)
			}
			labels := map[string]string{LabelRun: "r1", LabelDeploy: "r1"}
			nid, err := e.CreateNetwork(ctx, NetworkConfig{Name: "cnperf-r1", Driver: "bridge", CheckDuplicate: true, Labels: labels,
				Options: map[string]string{"com.docker.network.driver.mtu": "1500"}})
			must(err)
			n, err := e.InspectNetwork(ctx, nid)
			must(err)
			if len(n.IPAM.Config) != 1 || n.IPAM.Config[0].Gateway != "172.18.0.1" {
				t.Errorf("network %+v", n)
			}
			cid, err := e.CreateContainer(ctx, "cnperf-r1-server", ContainerConfig{Image: "cnperf-agent:abc", Cmd: []string{AgentPath, "agent"},
				Labels: labels, ExposedPorts: map[string]struct{}{"5201/tcp": {}},
				HostConfig: HostConfig{NetworkMode: "cnperf-r1", Binds: []string{"/run/x:/ctl"}, CpusetCpus: "1",
					PortBindings: map[string][]PortBinding{"5201/tcp": {{HostIP: "172.18.0.1"}}}}})
			must(err)
			must(e.StartContainer(ctx, cid))
			cj, err := e.InspectContainer(ctx, cid)
			must(err)
			if cj.State.Pid != 4242 || !cj.State.Running || cj.NetworkSettings.Networks["cnperf-r1"].IPAddress != "172.18.0.2" ||
				cj.NetworkSettings.Ports["5201/tcp"][0].HostPort != "32768" || cj.Image != "sha256:abc" {
				t.Errorf("inspect at %s: %+v", e.Version, cj)
			}
			cs, err := e.Containers(ctx, LabelRun+"=r1")
			must(err)
			if len(cs) != 1 {
				t.Errorf("containers %v", cs)
			}
			logs, err := e.Logs(ctx, cid, 3)
			must(err)
			if logs != "hello\noops\n" {
				t.Errorf("logs %q", logs)
			}
			must(RemoveLabelled(ctx, e, LabelDeploy+"=r1"))
			ns, err := e.Networks(ctx, LabelRun)
			must(err)
			if len(ns) != 0 || len(f.containers) != 0 {
				t.Errorf("left after RemoveLabelled: %v %v", ns, f.containers)
			}
			must(e.RemoveImage(ctx, "cnperf-agent:abc"))
			node, err := e.SwarmInit(ctx, SwarmInitRequest{ListenAddr: "10.0.0.1:2377", AdvertiseAddr: "10.0.0.1", DefaultAddrPool: []string{"10.10.0.0/16"}, SubnetSize: 24})
			must(err)
			tok, err := e.SwarmWorkerToken(ctx)
			must(err)
			must(e.SwarmJoin(ctx, SwarmJoinRequest{ListenAddr: "10.0.0.2:2377", RemoteAddrs: []string{"10.0.0.1:2377"}, JoinToken: tok}))
			if node != "node-1" || tok != "SWMTKN-worker" {
				t.Errorf("swarm: node %q token %q", node, tok)
			}
			// every request but the negotiation's /version carried the
			// negotiated version, and none was refused
			for i, req := range f.reqs {
				if i > 0 && !strings.Contains(req, " /v"+e.Version+"/") {
					t.Errorf("%s: not at /v%s", req, e.Version)
				}
				if f.statuses[i] >= 400 && !strings.HasPrefix(req, "GET /v"+e.Version+"/images/cnperf-agent:abc/json") {
					t.Errorf("%s: HTTP %d", req, f.statuses[i])
				}
			}
		})
	}
}

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		name, max, min, want, errHas string
	}{
		{"engine 20.10", "1.41", "1.12", "1.41", ""},
		{"engine 29.0", "1.52", "1.44", "1.52", ""},
		{"engine 29 at a newer API", "1.54", "1.44", MaxAPI, ""}, // asked the version we speak
		{"docker 18.09", "1.39", "1.12", "1.39", ""},
		{"no minimum given", "1.35", "", "1.35", ""},
		{"too old", "1.24", "1.12", "", "older than 1.30"},
		{"minimum above ours", "1.60", "1.53", "", "no version in common"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeEngine{t: t, apiVersion: tc.max, minAPI: tc.min}
			e := f.serve(t)
			err := e.Negotiate(context.Background())
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Negotiate = %v, want one line with %q", err, tc.errHas)
				}
				return
			}
			if err != nil || e.Version != tc.want {
				t.Fatalf("Negotiate = %v, version %q; want %q", err, e.Version, tc.want)
			}
			if e.Server.MinAPIVersion != tc.min || e.Server.APIVersion != tc.max {
				t.Errorf("Server = %+v, want the engine's %s..%s", e.Server, tc.min, tc.max)
			}
			// later requests carry the version in their path, and the
			// engine accepts them
			if _, err := e.Containers(context.Background(), "x"); err != nil {
				t.Fatal(err)
			}
			if last := f.reqs[len(f.reqs)-1]; !strings.HasPrefix(last, "GET /v"+tc.want+"/containers/json") {
				t.Errorf("request %q is not versioned /v%s", last, tc.want)
			}
		})
	}
}

// TestEngine29RefusesOldClients: the fake engine answers an old version's
// path as Engine 29 does, so the tests above prove something.
func TestEngine29RefusesOldClients(t *testing.T) {
	f := &fakeEngine{t: t, apiVersion: "1.52", minAPI: "1.44"}
	e := f.serve(t)
	e.Version = "1.41" // what cnperf asked for before Engine 29
	_, err := e.Containers(context.Background(), "x")
	want := "client version 1.41 is too old. Minimum supported API version is 1.44, please upgrade your client to a newer version"
	var a *APIError
	if !errors.As(err, &a) || a.Status != http.StatusBadRequest || a.Message != want {
		t.Fatalf("a 1.41 request to Engine 29 = %v, want HTTP 400 %q", err, want)
	}
}

func TestNoEngine(t *testing.T) {
	e, err := New("unix://" + filepath.Join(t.TempDir(), "nothing.sock"))
	if err != nil {
		t.Fatal(err)
	}
	err = e.Negotiate(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no Docker engine reachable") || !strings.Contains(err.Error(), "DOCKER_HOST") {
		t.Fatalf("Negotiate without an engine = %v, want one line naming the fix", err)
	}
	for _, h := range []string{"npipe:////./pipe/docker_engine", "ssh://me:secret@box", "http://box:2375"} {
		if _, err := New(h); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%s) = %v, want one line refusing it", h, err)
		}
	}
}

// TestSilentEngine: a listener that takes the connection and never
// answers gives the endpoint and the fix, not a bare deadline.
func TestSilentEngine(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "silent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	e, err := New("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = e.Negotiate(ctx)
	if err == nil || !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), "no answer to GET /version in time") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Negotiate with a silent engine = %v", err)
	}
}

func TestAPIErrorAndNotFound(t *testing.T) {
	f := &fakeEngine{t: t, apiVersion: "1.41"}
	e := f.serve(t)
	err := e.do(context.Background(), "GET", "/no/such/thing", nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "page not found") || !IsNotFound(err) {
		t.Fatalf("error = %v, want the engine's message and a 404", err)
	}
	// removing what is already gone is not an error: teardown twice
	if err := e.RemoveContainer(context.Background(), "gone"); err != nil {
		t.Errorf("RemoveContainer of a missing container = %v", err)
	}
	if err := e.RemoveNetwork(context.Background(), "gone"); err != nil {
		t.Errorf("RemoveNetwork of a missing network = %v", err)
	}
	if _, err := e.CreateContainer(context.Background(), "x", ContainerConfig{}); err == nil || !strings.Contains(err.Error(), "bad config") {
		t.Errorf("CreateContainer with a bad config = %v", err)
	}
}

// TestRemoveLabelledOnlyTouchesTheLabel: a user's objects, and another
// run's, survive a teardown by label.
func TestRemoveLabelledOnlyTouchesTheLabel(t *testing.T) {
	f := &fakeEngine{t: t, apiVersion: "1.41",
		containers: []ContainerSummary{
			{ID: "mine1", Labels: map[string]string{LabelRun: "r1", LabelDeploy: "r1"}},
			{ID: "mine2", Labels: map[string]string{LabelRun: "r1", LabelDeploy: "r1"}},
			{ID: "other-run", Labels: map[string]string{LabelRun: "r2", LabelDeploy: "r2"}},
			{ID: "users", Labels: map[string]string{"app": "web"}},
		},
		networks: []NetworkSummary{
			{ID: "n1", Name: "cnperf-r1", Labels: map[string]string{LabelRun: "r1", LabelDeploy: "r1"}},
			{ID: "un", Name: "users-net", Labels: map[string]string{}},
		},
	}
	e := f.serve(t)
	for i := 0; i < 2; i++ { // twice: harmless
		if err := RemoveLabelled(context.Background(), e, LabelDeploy+"=r1"); err != nil {
			t.Fatal(err)
		}
	}
	var left []string
	for _, c := range f.containers {
		left = append(left, c.ID)
	}
	for _, n := range f.networks {
		left = append(left, n.ID)
	}
	if got := strings.Join(left, ","); got != "other-run,users,un" {
		t.Errorf("left %s, want other-run,users,un", got)
	}
	for _, r := range f.reqs {
		if strings.HasPrefix(r, "DELETE") && (strings.Contains(r, "users") || strings.Contains(r, "other-run") || strings.Contains(r, "/un")) {
			t.Errorf("deleted what is not the run's: %s", r)
		}
	}
}

func TestImportAndLogs(t *testing.T) {
	for _, api := range []string{"1.41", "1.52"} {
		t.Run(api, func(t *testing.T) { testImportAndLogs(t, api) })
	}
}

func testImportAndLogs(t *testing.T, api string) {
	f := &fakeEngine{t: t, apiVersion: api}
	e := f.serve(t)
	ctx := context.Background()
	if err := e.Negotiate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.ImportImage(ctx, "cnperf-agent:abc", []string{"LABEL a=b"}, strings.NewReader("tar")); err != nil {
		t.Fatal(err)
	}
	last := f.reqs[len(f.reqs)-1]
	for _, want := range []string{"fromSrc=-", "repo=cnperf-agent", "tag=abc", "changes=LABEL"} {
		if !strings.Contains(last, want) {
			t.Errorf("import request %q lacks %q", last, want)
		}
	}
	f.importErr = "no space left"
	if err := e.ImportImage(ctx, "cnperf-agent:abc", nil, strings.NewReader("tar")); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("an error in the import stream = %v, want it reported", err)
	}
	s, err := e.Logs(ctx, "c1", 3)
	if err != nil || s != "hello\noops\n" {
		t.Errorf("Logs = %q, %v; want both streams demultiplexed", s, err)
	}
}

// TestCheckDuplicate: sent to engines before API 1.44, which made it the
// rule and deprecated the field, not after.
func TestCheckDuplicate(t *testing.T) {
	for _, tc := range []struct {
		max, min string
		sent     bool
	}{{"1.41", "1.12", true}, {"1.43", "1.12", true}, {"1.44", "1.24", false}, {"1.52", "1.44", false}} {
		f := &fakeEngine{t: t, apiVersion: tc.max, minAPI: tc.min}
		e := f.serve(t)
		if err := e.Negotiate(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := e.CreateNetwork(context.Background(), NetworkConfig{Name: "x", Driver: "bridge", CheckDuplicate: true}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(f.bodies["/networks/create"], "CheckDuplicate"); got != tc.sent {
			t.Errorf("API %s: CheckDuplicate sent %v, want %v (%s)", tc.max, got, tc.sent, f.bodies["/networks/create"])
		}
	}
}

func TestDemux(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"frames", append([]byte{1, 0, 0, 0, 0, 0, 0, 2}, 'h', 'i'), "hi"},
		{"torn", append([]byte{2, 0, 0, 0, 0, 0, 0, 9}, 'a', 'b'), "ab"},
		{"tty", []byte("plain text"), "plain text"},
		{"empty", nil, ""},
	} {
		if got := demux(tc.in); got != tc.want {
			t.Errorf("%s: demux = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"1.9", "1.30", true}, {"1.30", "1.9", false}, {"1.41", "1.41", false}, {"1.41", "2.0", true}, {"1.41.1", "1.41", false},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

// TestRootFS: a dynamic binary brings its interpreter and libraries; the
// binary itself is at AgentPath.
func TestRootFS(t *testing.T) {
	bin, err := os.Executable() // this test binary
	if err != nil {
		t.Fatal(err)
	}
	root, err := RootFS(bin)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(root))
	names := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names["/"+h.Name] = true
	}
	if !names[AgentPath] {
		t.Fatalf("no %s in the image: %v", AgentPath, names)
	}
	if _, err := os.Stat("/lib64/ld-linux-x86-64.so.2"); err == nil && len(names) > 1 {
		// dynamically linked (cgo): its loader must be there
		found := false
		for n := range names {
			found = found || strings.HasPrefix(filepath.Base(n), "ld-linux")
		}
		if !found {
			t.Errorf("a dynamic binary's image lacks its loader: %v", names)
		}
	}
	if _, err := RootFS(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("RootFS of a missing binary succeeded")
	}
}
