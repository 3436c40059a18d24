// Package cni runs the real CNI plugins of Debian's
// containernetworking-plugins (/usr/lib/cni: bridge, macvlan, ptp, with
// host-local IPAM) inside a lab host, so that the start-up experiment can
// time them beside cnperf's own replica of the same network. A plugin runs
// as a container runtime runs it: executed with the CNI_* environment and
// the network configuration on its standard input, in the host's network
// namespace (here the lab host's: the calling thread enters it and forks
// the plugin from there, so the plugin never sees the machine's own), the
// pod's namespace given as CNI_NETNS. Its IPAM leases live in the lab's
// state folder.
package cni

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
)

// Dir holds the plugins, where Debian installs them.
var Dir = "/usr/lib/cni"

// Version is the CNI specification version the configurations declare
// (Debian 12's plugins, 1.1.1, speak it).
const Version = "1.0.0"

// Reference is a real plugin's configuration for one host of a lab: the
// network configuration's plugin type and its fields beside "ipam".
type Reference struct {
	Type   string
	Fields map[string]any
	// Routes the IPAM result gives the pod ("0.0.0.0/0" for a default
	// route via the gateway); none for a pod on the underlay itself.
	Routes []string
	// Subnet of the pod's address (default the host's pod subnet);
	// Gateway false leaves the pod without one (macvlan).
	Subnet    netip.Prefix
	NoGateway bool
}

// Check says whether this machine has plugin typ and host-local.
func Check(typ string) error {
	for _, p := range []string{typ, "host-local"} {
		if _, err := os.Stat(filepath.Join(Dir, p)); err != nil {
			return fmt.Errorf("the real CNI plugin %s is not in %s; install it (apt-get install containernetworking-plugins)", p, Dir)
		}
	}
	return nil
}

// Conf is the network configuration for ref on host h: host-local hands
// out the upper half of h's pod subnet (lab.Host.SplitPods), its leases
// kept in the lab's state folder.
func Conf(l *lab.Lab, h *lab.Host, ref Reference) ([]byte, error) {
	first, last, err := h.SplitPods()
	if err != nil {
		return nil, err
	}
	subnet := ref.Subnet
	if !subnet.IsValid() {
		subnet = h.PodCIDR
	}
	rng := map[string]any{"subnet": subnet.String(), "rangeStart": first.String(), "rangeEnd": last.String()}
	if !ref.NoGateway {
		rng["gateway"] = h.PodGateway().String()
	}
	ipam := map[string]any{"type": "host-local", "ranges": [][]any{{rng}}, "dataDir": filepath.Join(l.Dir, "cni-ipam")}
	if len(ref.Routes) > 0 {
		var rs []map[string]string
		for _, r := range ref.Routes {
			rs = append(rs, map[string]string{"dst": r})
		}
		ipam["routes"] = rs
	}
	conf := map[string]any{"cniVersion": Version, "name": "cnperf-" + ref.Type, "type": ref.Type, "ipam": ipam}
	for k, v := range ref.Fields {
		conf[k] = v
	}
	return json.Marshal(conf)
}

// Result is what an ADD returned that the caller reads: the pod's address.
type Result struct {
	IP netip.Addr
}

// Run executes plugin typ's command (ADD, DEL) for the pod in namespace
// podNS, in host h's namespace, with conf on its standard input, and logs
// it in the lab's record as the equivalent shell line.
func Run(ctx context.Context, l *lab.Lab, h *lab.Host, command, typ, containerID, podNS string, conf []byte) (Result, error) {
	env := []string{
		"CNI_COMMAND=" + command, "CNI_CONTAINERID=" + containerID,
		"CNI_NETNS=/run/netns/" + podNS, "CNI_IFNAME=eth0", "CNI_PATH=" + Dir,
	}
	bin := filepath.Join(Dir, typ)
	l.Record("ip netns exec " + h.NetNS + " env " + strings.Join(env, " ") + " " + bin + " <<< '" + string(conf) + "'")
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(env, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.Stdin = bytes.NewReader(conf)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := lab.InNetNS(h.NetNS, cmd.Start); err != nil {
		return Result{}, fmt.Errorf("starting %s %s: %w", typ, command, err)
	}
	if err := cmd.Wait(); err != nil {
		msg := strings.TrimSpace(stdout.String() + " " + stderr.String())
		return Result{}, fmt.Errorf("CNI %s %s in %s: %v: %s", typ, command, h.Name, err, msg)
	}
	if command != "ADD" {
		return Result{}, nil
	}
	var res struct {
		IPs []struct {
			Address string `json:"address"`
		} `json:"ips"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || len(res.IPs) == 0 {
		return Result{}, fmt.Errorf("CNI %s ADD returned no address: %q", typ, stdout.String())
	}
	p, err := netip.ParsePrefix(res.IPs[0].Address)
	if err != nil {
		return Result{}, fmt.Errorf("CNI %s ADD: address %q: %w", typ, res.IPs[0].Address, err)
	}
	return Result{IP: p.Addr()}, nil
}
