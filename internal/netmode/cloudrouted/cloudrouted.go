// Package cloudrouted is Flannel's aws-vpc backend: the hosts sit on
// different subnets behind a router (the VPC), and instead of tunnels or
// host routes, flanneld writes one route per host into the router's route
// table: that host's pod subnet via that host. Pods are on the cni0 bridge,
// and leave the host through its default route to the router. AWS caps a
// VPC route table at 50 entries by default, so the mode refuses a cluster
// with more hosts than the table's limit.
//
// The lab is built with a routed underlay (lab.Config.Routed): host N on
// 10.100.N.0/24, the router at .1 of each. Mode options:
//
//	route-limit=N  entries the router's table may hold (default 50, AWS's)
package cloudrouted

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

// BridgeName is Flannel's CNI bridge.
const BridgeName = "cni0"

// DefaultRouteLimit is AWS's default limit of routes in a VPC route table.
const DefaultRouteLimit = 50

// ErrRouteLimit is returned when the router's table would overflow.
var ErrRouteLimit = errors.New("route table full")

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is Flannel aws-vpc.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "cloud-routed" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "Flannel aws-vpc: hosts on separate subnets behind a router whose table holds a route per pod subnet (limit 50, --mode-opt route-limit)"
}

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Options implements netmode.Mode.
func (Mode) Options() []option.Spec {
	return []option.Spec{
		{Name: "route-limit", Kind: option.Int, Default: strconv.Itoa(DefaultRouteLimit),
			Help: "entries the router's table may hold (AWS's default VPC limit)"},
	}
}

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel:   []netmode.KernelFeature{{Config: "CONFIG_BRIDGE", What: "Linux bridge"}},
		Commands: []string{"ip"},
	}
}

// ShapeLab implements netmode.LabShaper: the hosts go behind a router.
func (Mode) ShapeLab(cfg *lab.Config) { cfg.Routed = true }

// RouteLimit reads the route-limit option.
func RouteLimit(c *lab.Config) (int, error) {
	v := c.ModeOpt("route-limit", strconv.Itoa(DefaultRouteLimit))
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("cloud-routed: route-limit=%s; use a positive number of routes (AWS's default is %d)", v, DefaultRouteLimit)
	}
	return n, nil
}

// RouteTable is the router's table as the cloud API sees it: entries up to
// a limit.
type RouteTable struct {
	Limit   int
	Entries []Route
}

// Route sends a pod subnet to a host.
type Route struct {
	Dst     netip.Prefix
	Via     netip.Addr
	Dev     string // the router's link to the host
	forHost string
}

// Add appends a route, or fails with ErrRouteLimit when the table is full.
func (t *RouteTable) Add(r Route) error {
	if len(t.Entries) >= t.Limit {
		return fmt.Errorf("%w: the router's table holds at most %d routes and %s needs one more for %s; use fewer hosts, raise --mode-opt route-limit (AWS: ask for a higher quota) or use vxlan",
			ErrRouteLimit, t.Limit, r.forHost, r.Dst)
	}
	t.Entries = append(t.Entries, r)
	return nil
}

// Plan is the route table for lab l, one entry per host, or ErrRouteLimit.
func Plan(l *lab.Lab) (*RouteTable, error) {
	limit, err := RouteLimit(&l.Cfg)
	if err != nil {
		return nil, err
	}
	t := &RouteTable{Limit: limit}
	for _, h := range l.Hosts {
		if err := t.Add(Route{Dst: h.PodCIDR, Via: h.IP, Dev: h.Name, forHost: h.Name}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Setup implements netmode.Mode. The table is planned in full first, so a
// cluster past the limit is refused before anything is configured.
// Equivalent to:
//
//	ip -n H link add cni0 ... type bridge; addr GW/24; up     (each host)
//	ip -n RT route add POD_SUBNET via HOST_IP dev hN          (each host)
func (Mode) Setup(ctx context.Context, l *lab.Lab) error {
	if l.Router == "" {
		return errors.New("cloud-routed needs a routed underlay (lab.Config.Routed, or --mode-opt underlay=routed)")
	}
	table, err := Plan(l)
	if err != nil {
		return err
	}
	for _, h := range l.Hosts {
		if err := podnet.EnsureBridge(ctx, l, h, BridgeName, l.Cfg.MTU); err != nil {
			return err
		}
	}
	for _, r := range table.Entries {
		if err := l.Apply(ctx, l.Router, iproute.Route{Dst: r.Dst, Via: r.Via, Dev: r.Dev}); err != nil {
			return fmt.Errorf("cloud route for %s: %w", r.Dst, err)
		}
	}
	return nil
}

// AddPod implements netmode.Mode.
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return podnet.AttachPod(ctx, l, h, name, BridgeName, l.Cfg.MTU)
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}

// Traits implements netmode.TraitDeclarer.
func (Mode) Traits() netmode.Traits {
	return netmode.Traits{RouteLimitOption: "route-limit"}
}
