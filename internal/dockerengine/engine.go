// Package dockerengine is cnperf's client of the Docker Engine API: the
// calls the docker and docker-lab backends make, on net/http, with the API
// version negotiated against the engine's own range, and the conventions
// cnperf keeps on an engine (its labels, the agent image, removal by
// label). Both backends use it; neither imports the other.
//
// It is not the moby project's Go client on purpose: that client adds 20
// modules (OpenTelemetry among them) and 2 MB to a static binary for the
// twenty requests made here, and handles neither ssh:// hosts nor Docker
// contexts, which are the docker CLI's.
package dockerengine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Engine is a client of one Docker engine.
type Engine struct {
	hc      *http.Client
	base    string      // "http://docker" for a unix socket
	Version string      // the negotiated API version, "1.41"
	Server  VersionInfo // the engine's GET /version, read by Negotiate
	Local   bool        // the engine runs on this machine's kernel (unix socket)
	Where   string      // the endpoint, for messages
	// Endpoint is where the engine was found (DOCKER_HOST, a context...).
	Endpoint Endpoint
	// Unreachable, when set, is the error for an engine that does not
	// answer: one cnperf started itself is not the user's to start
	// (docker-lab's). The default names the user's fix.
	Unreachable func(err error) error
}

// MinAPI is the oldest Engine API this client speaks (Docker 17.06).
const MinAPI = "1.30"

// MaxAPI is the newest it asks for: Docker Engine 29.0's. Every request the
// client makes was checked against the API's version history up to this
// version; what changed for them is handled where it is sent or read
// (CheckDuplicate at 1.44, the import stream's errorDetail at 1.48,
// /info's BridgeNfIptables gone at 1.50, the container's top-level
// addresses gone at 1.52, never read here). An engine whose own minimum is
// above it is refused in one line rather than sent requests it rejects.
const MaxAPI = "1.52"

// DefaultHost is where the engine listens unless DOCKER_HOST or a Docker
// context says otherwise.
const DefaultHost = "unix:///var/run/docker.sock"

// New makes a client for host ("unix:///path", "tcp://h:p", "ssh://[user@]h[:p]";
// "" = as the docker CLI resolves it: $DOCKER_HOST, $DOCKER_CONTEXT, the
// current context, the default socket; see Endpoint). It does not
// contact the engine.
func New(host string) (*Engine, error) {
	ep, err := Resolve(host, os.Getenv)
	if err != nil {
		return nil, err
	}
	return NewAt(ep)
}

// NewAt makes a client for a resolved endpoint.
func NewAt(ep Endpoint) (*Engine, error) {
	e := &Engine{Where: ep.String(), Endpoint: ep}
	proto, addr, _ := strings.Cut(ep.Host, "://")
	tr := &http.Transport{IdleConnTimeout: 30 * time.Second}
	e.hc = &http.Client{Transport: tr}
	switch proto {
	case "unix":
		e.Local = true
		e.base = "http://docker"
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}
	case "tcp":
		e.base = "http://" + addr
		if ep.TLS {
			c, err := ep.tlsConfig()
			if err != nil {
				return nil, err
			}
			e.base, tr.TLSClientConfig = "https://"+addr, c
		}
	case "ssh":
		args, err := sshArgs(ep.Host)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", ep, err)
		}
		e.base = "http://docker"
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialCommand(ctx, "ssh", args...)
		}
	default:
		return nil, fmt.Errorf("docker host %s: scheme %q not supported; use unix://, tcp:// or ssh://", ep, proto)
	}
	return e, nil
}

// Close lets go of the engine's idle connections (over ssh, each is an
// ssh process).
func (e *Engine) Close() { e.hc.CloseIdleConnections() }

// APIError is an error answer of the engine.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("docker engine: %s (HTTP %d)", e.Message, e.Status)
}

// IsNotFound says whether err is the engine's 404.
func IsNotFound(err error) bool {
	var a *APIError
	return errors.As(err, &a) && a.Status == http.StatusNotFound
}

func (e *Engine) path(p string) string {
	if e.Version == "" {
		return e.base + p
	}
	return e.base + "/v" + e.Version + p
}

// unreachable is the error for an engine that does not answer, with the
// fix for where it was looked for.
func (e *Engine) unreachable(err error) error {
	if e.Unreachable != nil {
		return e.Unreachable(err)
	}
	hint := "start it (systemctl start docker, or apt-get install docker.io) or set DOCKER_HOST"
	switch {
	case e.Endpoint.Context != "":
		hint = "check the context (docker context inspect " + e.Endpoint.Context + "), choose another (docker context use) or set DOCKER_HOST"
	case strings.HasPrefix(e.Endpoint.Host, "ssh://"):
		hint = "check that ssh reaches the host without a prompt and runs docker there (ssh HOST docker version), or set DOCKER_HOST"
	case !e.Local:
		hint = "check that an engine listens there and that DOCKER_HOST (and DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) are right"
	}
	return fmt.Errorf("no Docker engine reachable at %s (%w); %s", e.Where, err, hint)
}

// do sends a request; body, when not nil and not a reader, is sent as JSON;
// out, when not nil, receives the JSON answer.
func (e *Engine) do(ctx context.Context, method, p string, q url.Values, body any, out any) error {
	u := e.path(p)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case io.Reader:
		rd, ctype = b, "application/x-tar"
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd, ctype = bytes.NewReader(buf), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// an engine that takes the connection and never answers (a
			// TLS port spoken to in plain HTTP, a wrong port): say where
			return e.unreachable(fmt.Errorf("no answer to %s %s in time: %w", method, p, ctx.Err()))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return e.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &m) != nil || m.Message == "" {
			m.Message = strings.TrimSpace(string(b))
		}
		return &APIError{Status: resp.StatusCode, Message: m.Message}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if w, ok := out.(io.Writer); ok {
		_, err = io.Copy(w, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Negotiate asks the engine which API versions it accepts (GET /version,
// unversioned: every engine answers that at its own default version,
// whatever its minimum) and settles the one to speak: the highest both
// sides know, never below the engine's minimum.
func (e *Engine) Negotiate(ctx context.Context) error {
	e.Version = ""
	var v VersionInfo
	if err := e.do(ctx, http.MethodGet, "/version", nil, nil, &v); err != nil {
		var a *APIError
		if errors.As(err, &a) && strings.Contains(a.Message, "HTTPS server") {
			return fmt.Errorf("docker engine at %s speaks TLS; set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (the folder of ca.pem, cert.pem, key.pem)", e.Where)
		}
		if errors.As(err, &a) {
			return fmt.Errorf("docker engine at %s answers /version with HTTP %d (%s); is it a Docker engine?", e.Where, a.Status, a.Message)
		}
		return err
	}
	if v.APIVersion == "" {
		return fmt.Errorf("docker engine at %s gives no API version; is it a Docker engine?", e.Where)
	}
	ver, err := negotiateAPI(v.APIVersion, v.MinAPIVersion)
	if err != nil {
		return fmt.Errorf("docker engine at %s (Docker %s): %w", e.Where, v.Version, err)
	}
	e.Version, e.Server = ver, v
	return nil
}

// negotiateAPI is the API version to speak with an engine that accepts
// engineMin to engineMax ("" min: an engine too old to say, which accepts
// everything down to 1.12): the lower of engineMax and MaxAPI, an error
// when that is below MinAPI or below the engine's minimum.
func negotiateAPI(engineMax, engineMin string) (string, error) {
	v := engineMax
	if versionLess(MaxAPI, v) {
		v = MaxAPI
	}
	if versionLess(v, MinAPI) {
		return "", fmt.Errorf("it speaks API %s, older than %s (Docker 17.06); upgrade it (apt-get install docker.io)", engineMax, MinAPI)
	}
	if engineMin != "" && versionLess(v, engineMin) {
		return "", fmt.Errorf("it accepts API %s to %s, this cnperf speaks %s to %s; no version in common: use a newer cnperf", engineMin, engineMax, MinAPI, MaxAPI)
	}
	return v, nil
}

// Before says whether the negotiated API version is older than v: what
// a request sends or an answer holds that changed at v.
// Not yet negotiated, requests go unversioned: the engine's newest.
func (e *Engine) Before(v string) bool { return e.Version != "" && versionLess(e.Version, v) }

// RecordVersions adds the engine's versions to an environment record:
// api_version (the negotiated one, every request's), engine_version,
// engine_api_version and engine_min_api_version (the range it accepts).
func (e *Engine) RecordVersions(m map[string]string) {
	m["api_version"] = e.Version
	m["engine_version"] = e.Server.Version
	m["engine_api_version"] = e.Server.APIVersion
	m["engine_min_api_version"] = e.Server.MinAPIVersion
}

// versionLess compares dotted API versions ("1.9" < "1.30").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// VersionInfo is GET /version.
type VersionInfo struct {
	Version       string
	APIVersion    string `json:"ApiVersion"`
	MinAPIVersion string `json:"MinAPIVersion"`
	KernelVersion string
}

// Info is the part of GET /info this backend records.
type Info struct {
	Driver         string
	CgroupDriver   string
	DockerRootDir  string
	IPv4Forwarding bool
	// BridgeNfIptables is nil from API 1.50 on, which no longer reports
	// it (the engine loads br_netfilter only when a network needs it).
	BridgeNfIptables  *bool
	BridgeNfIP6tables *bool `json:"BridgeNfIp6tables"`
	SecurityOptions   []string
	Swarm             struct {
		LocalNodeState   string
		NodeID           string
		ControlAvailable bool
		Error            string
	}
}

// EngineInfo asks the engine about itself.
func (e *Engine) EngineInfo(ctx context.Context) (Info, error) {
	var v Info
	err := e.do(ctx, http.MethodGet, "/info", nil, nil, &v)
	return v, err
}

// labelFilter is the filters parameter selecting objects by labels
// ("k=v" or "k").
func labelFilter(labels ...string) url.Values {
	b, _ := json.Marshal(map[string][]string{"label": labels})
	return url.Values{"filters": {string(b)}}
}

// ImageSummary is an entry of GET /images/json.
type ImageSummary struct {
	ID       string `json:"Id"`
	RepoTags []string
	Labels   map[string]string
}

// Images lists images carrying every label given.
func (e *Engine) Images(ctx context.Context, labels ...string) ([]ImageSummary, error) {
	var v []ImageSummary
	err := e.do(ctx, http.MethodGet, "/images/json", labelFilter(labels...), nil, &v)
	return v, err
}

// ImageExists says whether ref names an image.
func (e *Engine) ImageExists(ctx context.Context, ref string) (bool, error) {
	err := e.do(ctx, http.MethodGet, "/images/"+ref+"/json", nil, nil, nil)
	if IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// ImportImage makes image ref from a root file system tarball, with
// Dockerfile-like changes ("LABEL k=v"), as `docker import` does: nothing
// is pulled.
func (e *Engine) ImportImage(ctx context.Context, ref string, changes []string, tarball io.Reader) error {
	repo, tag, _ := strings.Cut(ref, ":")
	q := url.Values{"fromSrc": {"-"}, "repo": {repo}}
	if tag != "" {
		q.Set("tag", tag)
	}
	for _, c := range changes {
		q.Add("changes", c)
	}
	var msgs bytes.Buffer
	if err := e.do(ctx, http.MethodPost, "/images/create", q, tarball, &msgs); err != nil {
		return err
	}
	return streamError(&msgs, "importing "+ref)
}

// streamError is the error in a JSON progress stream (POST /images/create,
// /images/load): errorDetail.message, or the "error" that API 1.48
// deprecated and a later version may leave empty.
func streamError(r io.Reader, what string) error {
	dec := json.NewDecoder(r)
	for dec.More() {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if dec.Decode(&m) != nil {
			break
		}
		if msg := cmp.Or(m.ErrorDetail.Message, m.Error); msg != "" {
			return fmt.Errorf("docker engine: %s: %s", what, msg)
		}
	}
	return nil
}

// RemoveImage deletes an image by id or reference.
func (e *Engine) RemoveImage(ctx context.Context, ref string) error {
	err := e.do(ctx, http.MethodDelete, "/images/"+ref, nil, nil, nil)
	if IsNotFound(err) {
		return nil
	}
	return err
}

// PortBinding is a host side of a published port.
type PortBinding struct {
	HostIP   string `json:"HostIp,omitempty"`
	HostPort string `json:"HostPort"`
}

// HostConfig is the part of a container's host config this backend sets.
type HostConfig struct {
	NetworkMode  string                   `json:"NetworkMode,omitempty"`
	Binds        []string                 `json:"Binds,omitempty"`
	PortBindings map[string][]PortBinding `json:"PortBindings,omitempty"`
	CpusetCpus   string                   `json:"CpusetCpus,omitempty"`
	Init         *bool                    `json:"Init,omitempty"`
	Sysctls      map[string]string        `json:"Sysctls,omitempty"`
	SecurityOpt  []string                 `json:"SecurityOpt,omitempty"`
}

// ContainerConfig is POST /containers/create's body.
type ContainerConfig struct {
	Image        string              `json:"Image"`
	Cmd          []string            `json:"Cmd"`
	Labels       map[string]string   `json:"Labels,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	HostConfig   HostConfig          `json:"HostConfig"`
	// NetworkingConfig attaches the container to a user network by name.
	NetworkingConfig *struct {
		EndpointsConfig map[string]struct{} `json:"EndpointsConfig"`
	} `json:"NetworkingConfig,omitempty"`
}

// CreateContainer creates a container named name and returns its id.
func (e *Engine) CreateContainer(ctx context.Context, name string, c ContainerConfig) (string, error) {
	var v struct {
		ID string `json:"Id"`
	}
	err := e.do(ctx, http.MethodPost, "/containers/create", url.Values{"name": {name}}, c, &v)
	return v.ID, err
}

// StartContainer starts a created container.
func (e *Engine) StartContainer(ctx context.Context, id string) error {
	return e.do(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil)
}

// RemoveContainer force-removes a container and its anonymous volumes; a
// container already gone is not an error.
func (e *Engine) RemoveContainer(ctx context.Context, id string) error {
	err := e.do(ctx, http.MethodDelete, "/containers/"+id, url.Values{"force": {"1"}, "v": {"1"}}, nil, nil)
	if IsNotFound(err) {
		return nil
	}
	var a *APIError
	if errors.As(err, &a) && a.Status == http.StatusConflict && strings.Contains(a.Message, "already in progress") {
		return nil
	}
	return err
}

// ContainerJSON is the part of GET /containers/{id}/json this backend reads.
type ContainerJSON struct {
	ID    string `json:"Id"`
	Name  string
	Image string // the image's id
	State struct {
		Status    string // created, running, paused, restarting, exited, dead
		Running   bool
		Paused    bool
		OOMKilled bool
		Pid       int
		ExitCode  int
		Error     string
	}
	NetworkSettings struct {
		Networks map[string]struct {
			IPAddress string
			Gateway   string
		}
		Ports map[string][]PortBinding
	}
	Config struct {
		Labels map[string]string
	}
}

// InspectContainer reads a container's state and addresses.
func (e *Engine) InspectContainer(ctx context.Context, id string) (ContainerJSON, error) {
	var v ContainerJSON
	err := e.do(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &v)
	return v, err
}

// ContainerSummary is an entry of GET /containers/json.
type ContainerSummary struct {
	ID     string `json:"Id"`
	Names  []string
	Labels map[string]string
	State  string
}

// Containers lists every container (running or not) carrying every label.
func (e *Engine) Containers(ctx context.Context, labels ...string) ([]ContainerSummary, error) {
	q := labelFilter(labels...)
	q.Set("all", "1")
	var v []ContainerSummary
	err := e.do(ctx, http.MethodGet, "/containers/json", q, nil, &v)
	return v, err
}

// Logs is the end of a container's output, tail lines of it.
func (e *Engine) Logs(ctx context.Context, id string, tail int) (string, error) {
	var buf bytes.Buffer
	q := url.Values{"stdout": {"1"}, "stderr": {"1"}, "tail": {strconv.Itoa(tail)}}
	if err := e.do(ctx, http.MethodGet, "/containers/"+id+"/logs", q, nil, &buf); err != nil {
		return "", err
	}
	return demux(buf.Bytes()), nil
}

// demux undoes the engine's stream multiplexing of a container without a
// terminal: frames of an 8-byte header (stream, 0, 0, 0, big-endian
// length) and the payload.
func demux(b []byte) string {
	var out strings.Builder
	for len(b) >= 8 && b[0] <= 2 && b[1] == 0 && b[2] == 0 && b[3] == 0 {
		n := int(binary.BigEndian.Uint32(b[4:8]))
		b = b[8:]
		if n > len(b) {
			n = len(b)
		}
		out.Write(b[:n])
		b = b[n:]
	}
	out.Write(b) // not multiplexed (a terminal) or a torn end
	return out.String()
}

// NetworkConfig is POST /networks/create's body.
type NetworkConfig struct {
	Name   string `json:"Name"`
	Driver string `json:"Driver"`
	// CheckDuplicate refuses a second network of the same name; API 1.44
	// made that the rule and deprecated the field, so CreateNetwork sends
	// it to older engines only.
	CheckDuplicate bool              `json:"CheckDuplicate,omitempty"`
	Labels         map[string]string `json:"Labels,omitempty"`
	Options        map[string]string `json:"Options,omitempty"`
	// Attachable: plain containers (docker run --network) may join a
	// swarm-scoped overlay network, not only services' tasks.
	Attachable bool `json:"Attachable,omitempty"`
	// IPAM sets the addresses (docker network create --subnet, --ip-range,
	// --gateway); nil leaves them to the engine.
	IPAM *IPAM `json:"IPAM,omitempty"`
}

// IPAM is a network's address management.
type IPAM struct {
	Driver string       `json:"Driver"`
	Config []IPAMConfig `json:"Config"`
}

// IPAMConfig is one subnet of a network: the containers' addresses come
// from IPRange (a part of Subnet), Gateway is the address the engine
// reserves as the containers' default route, and AuxAddresses are others
// it does not hand out (--aux-address name=ip).
type IPAMConfig struct {
	Subnet       string            `json:"Subnet"`
	IPRange      string            `json:"IPRange,omitempty"`
	Gateway      string            `json:"Gateway,omitempty"`
	AuxAddresses map[string]string `json:"AuxiliaryAddresses,omitempty"`
}

// CreateNetwork creates a network and returns its id.
func (e *Engine) CreateNetwork(ctx context.Context, n NetworkConfig) (string, error) {
	var v struct {
		ID string `json:"Id"`
	}
	if !e.Before("1.44") {
		n.CheckDuplicate = false
	}
	err := e.do(ctx, http.MethodPost, "/networks/create", nil, n, &v)
	return v.ID, err
}

// NetworkSummary is an entry of GET /networks.
type NetworkSummary struct {
	ID     string `json:"Id"`
	Name   string
	Driver string
	Labels map[string]string
	IPAM   struct {
		Config []struct {
			Subnet  string
			Gateway string
		}
	}
	Options map[string]string
}

// Networks lists networks carrying every label.
func (e *Engine) Networks(ctx context.Context, labels ...string) ([]NetworkSummary, error) {
	var v []NetworkSummary
	err := e.do(ctx, http.MethodGet, "/networks", labelFilter(labels...), nil, &v)
	return v, err
}

// InspectNetwork reads a network.
func (e *Engine) InspectNetwork(ctx context.Context, id string) (NetworkSummary, error) {
	var v NetworkSummary
	err := e.do(ctx, http.MethodGet, "/networks/"+id, nil, nil, &v)
	return v, err
}

// RemoveNetwork deletes a network; one already gone is not an error.
func (e *Engine) RemoveNetwork(ctx context.Context, id string) error {
	err := e.do(ctx, http.MethodDelete, "/networks/"+id, nil, nil, nil)
	if IsNotFound(err) {
		return nil
	}
	return err
}

// SwarmInitRequest is POST /swarm/init's body.
type SwarmInitRequest struct {
	ListenAddr      string   `json:"ListenAddr"`
	AdvertiseAddr   string   `json:"AdvertiseAddr,omitempty"`
	DataPathAddr    string   `json:"DataPathAddr,omitempty"`
	DefaultAddrPool []string `json:"DefaultAddrPool,omitempty"`
	SubnetSize      uint32   `json:"SubnetSize,omitempty"`
}

// SwarmInit makes the engine the first manager of a new swarm and returns
// its node id.
func (e *Engine) SwarmInit(ctx context.Context, r SwarmInitRequest) (string, error) {
	var id string
	err := e.do(ctx, http.MethodPost, "/swarm/init", nil, r, &id)
	return id, err
}

// SwarmJoinRequest is POST /swarm/join's body.
type SwarmJoinRequest struct {
	ListenAddr    string   `json:"ListenAddr"`
	AdvertiseAddr string   `json:"AdvertiseAddr,omitempty"`
	DataPathAddr  string   `json:"DataPathAddr,omitempty"`
	RemoteAddrs   []string `json:"RemoteAddrs"`
	JoinToken     string   `json:"JoinToken"`
}

// SwarmJoin joins the engine to a swarm.
func (e *Engine) SwarmJoin(ctx context.Context, r SwarmJoinRequest) error {
	return e.do(ctx, http.MethodPost, "/swarm/join", nil, r, nil)
}

// SwarmWorkerToken is the token a worker joins the engine's swarm with
// (the engine must be a manager).
func (e *Engine) SwarmWorkerToken(ctx context.Context) (string, error) {
	var v struct {
		JoinTokens struct{ Worker string }
	}
	err := e.do(ctx, http.MethodGet, "/swarm", nil, nil, &v)
	return v.JoinTokens.Worker, err
}
