// Package etcd runs a real etcd (Debian's etcd-server) as the lab's
// key-value store, the way Flannel keeps its subnet leases and Docker's
// classic overlay kept its endpoint mappings: etcd lives in its own "kv"
// namespace on the underlay switch, as a separate machine would, with its
// data in the lab's state folder, and dies with the lab. The lab's hosts
// talk to it over the underlay: the coordinator acts on a host's behalf with
// etcdctl run inside that host's namespace (so every registration is a
// recorded lab command), and user-space daemons use Client, a small client
// of etcd's JSON gateway.
package etcd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/cnperf/cnperf/internal/ctrlplane"
	"github.com/cnperf/cnperf/internal/lab"
)

// Ports etcd listens on.
const (
	ClientPort = 2379
	PeerPort   = 2380
)

// ErrNoEtcd is returned when the etcd or etcdctl program is missing.
var ErrNoEtcd = errors.New("etcd not installed")

// LookPath finds programs; tests replace it to simulate a missing etcd.
var LookPath = exec.LookPath

// Server is a running etcd in the lab.
type Server struct {
	NS   string     // its namespace
	IP   netip.Addr // its underlay address
	URL  string     // client URL, http://IP:2379
	Proc *lab.Proc  // nil when the lab only records
}

// Addr is the etcd machine's underlay address: the underlay's last usable
// one, far from the hosts (1..N).
func Addr(l *lab.Lab) netip.Addr {
	p := l.Cfg.Underlay.Masked()
	b := p.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= (1 << (32 - p.Bits())) - 1
	v-- // broadcast -1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Check reports whether etcd and etcdctl are installed, saying how to fix it.
func Check() error {
	for _, c := range []string{"etcd", "etcdctl"} {
		if _, err := LookPath(c); err != nil {
			pkg := "etcd-server"
			if c == "etcdctl" {
				pkg = "etcd-client"
			}
			return fmt.Errorf("%w: the control plane needs the %q command; install it (apt-get install %s) or run with --mode-opt controlplane=off", ErrNoEtcd, c, pkg)
		}
	}
	return nil
}

// Start builds the kv namespace, starts etcd in it and waits until it
// answers. Everything it creates is registered with the lab before anything
// can fail, so the lab's Teardown removes a half-started etcd too.
//
// Equivalent to:
//
//	ip netns add KV
//	ip -n SW link add kv type veth peer name eth0 netns KV
//	ip -n SW link set kv master br0 up
//	ip -n KV addr add IP/BITS dev eth0 && ip -n KV link set eth0 up
//	ip netns exec KV etcd --data-dir STATE/etcd ... &
//	ip netns exec KV etcdctl --endpoints URL endpoint health   (until healthy)
func Start(ctx context.Context, l *lab.Lab) (*Server, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	ns, err := l.AddNS(ctx, "kv")
	if err != nil {
		return nil, err
	}
	ip := Addr(l)
	mtu := fmt.Sprint(l.Cfg.MTU)
	steps := [][]string{
		{"ip", "-n", l.Switch, "link", "add", "kv", "mtu", mtu, "type", "veth", "peer", "name", "eth0", "mtu", mtu, "netns", ns},
		{"ip", "-n", l.Switch, "link", "set", "kv", "master", "br0", "up"},
		{"ip", "-n", ns, "addr", "add", netip.PrefixFrom(ip, l.Cfg.Underlay.Bits()).String(), "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if _, err := l.Run(ctx, s...); err != nil {
			return nil, fmt.Errorf("etcd namespace: %w", err)
		}
	}
	s := &Server{NS: ns, IP: ip, URL: fmt.Sprintf("http://%s:%d", ip, ClientPort)}
	peer := fmt.Sprintf("http://127.0.0.1:%d", PeerPort)
	s.Proc, err = ctrlplane.Start(l, ns, "etcd", "etcd",
		"--name", "kv", "--data-dir", filepath.Join(l.Dir, "etcd"),
		"--listen-client-urls", s.URL, "--advertise-client-urls", s.URL,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "kv="+peer, "--initial-cluster-state", "new",
		"--logger", "zap", "--log-level", "warn")
	if err != nil {
		return nil, err
	}
	if err := s.waitHealthy(ctx, l, 15*time.Second); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) waitHealthy(ctx context.Context, l *lab.Lab, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := l.In(hctx, s.NS, "etcdctl", "--endpoints", s.URL, "--dial-timeout", "1s", "endpoint", "health")
		cancel()
		if err == nil {
			return nil
		}
		if s.Proc != nil {
			select {
			case <-s.Proc.Done():
				return fmt.Errorf("etcd exited: %s", l.LogTail("etcd", 5))
			default:
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("etcd not healthy after %v: %w (log: %s)", limit, err, l.LogTail("etcd", 5))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Put stores key=val on behalf of the host whose namespace is ns (the
// request crosses that host's underlay link). Equivalent to:
//
//	ip netns exec NS etcdctl --endpoints URL put KEY VAL
func (s *Server) Put(ctx context.Context, l *lab.Lab, ns, key, val string) error {
	if _, err := l.In(ctx, ns, "etcdctl", "--endpoints", s.URL, "put", key, val); err != nil {
		return fmt.Errorf("etcd put %s: %w", key, err)
	}
	return nil
}

// KV is one key and its value.
type KV struct {
	Key, Value string
}

// GetPrefix reads every key under prefix on behalf of the host whose
// namespace is ns, sorted by key. Equivalent to:
//
//	ip netns exec NS etcdctl --endpoints URL get --prefix PREFIX -w json
func (s *Server) GetPrefix(ctx context.Context, l *lab.Lab, ns, prefix string) ([]KV, error) {
	out, err := l.In(ctx, ns, "etcdctl", "--endpoints", s.URL, "get", "--prefix", prefix, "-w", "json")
	if err != nil {
		return nil, fmt.Errorf("etcd get %s: %w", prefix, err)
	}
	return parseGet(out)
}

// rangeResponse is etcd's range answer as etcdctl -w json and the JSON
// gateway print it: keys and values are base64.
type rangeResponse struct {
	Header struct {
		Revision json.Number `json:"revision"`
	} `json:"header"`
	KVs []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"kvs"`
}

func parseGet(out []byte) ([]KV, error) {
	if len(out) == 0 {
		return nil, nil // a recording lab answers nothing
	}
	var r rangeResponse
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("etcd answer: %w", err)
	}
	return decodeKVs(r)
}

func decodeKVs(r rangeResponse) ([]KV, error) {
	kvs := make([]KV, 0, len(r.KVs))
	for _, e := range r.KVs {
		k, err1 := base64.StdEncoding.DecodeString(e.Key)
		v, err2 := base64.StdEncoding.DecodeString(e.Value)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("etcd answer: %w", err)
		}
		kvs = append(kvs, KV{string(k), string(v)})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key })
	return kvs, nil
}

// PrefixEnd is the range end that selects every key starting with prefix.
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}
