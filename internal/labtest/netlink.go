package labtest

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
)

// NetlinkMatchesCommands builds mode name for real twice, as Golden lays it
// out (hosts, Setup, a client pod and a server pod on each placement's
// host): once through netlink, once running every recorded command line
// (lab.Config.Commands). It fails t unless the two record the same
// commands and leave the same kernel state in every namespace: links
// with their details, addresses, routes, permanent neighbours, FDB
// entries and the sysctls the lab sets. So what the record says is what
// netlink did.
func NetlinkMatchesCommands(t testing.TB, name string, opts map[string]string) {
	t.Helper()
	NeedRoot(t)
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netmode.CheckOpts(m, opts); err != nil {
		t.Skipf("this machine cannot build %s: %v", name, err)
	}
	native, nCmds := buildState(t, name, opts, false)
	commands, cCmds := buildState(t, name, opts, true)
	if nCmds != cCmds {
		t.Errorf("netlink recorded other commands than the command run:\n%s", firstDiff(nCmds, cCmds))
	}
	if native != commands {
		t.Errorf("netlink left another state than the commands:\n%s", firstDiff(native, commands))
	}
}

// buildState builds the layout and returns its state dump and its
// commands, the lab id replaced by "ID".
func buildState(t testing.TB, name string, opts map[string]string, commands bool) (state, cmds string) {
	t.Helper()
	m, _ := netmode.Get(name)
	id := lab.NewID()
	cfg := lab.Config{ID: id, ModeOptions: opts, Commands: commands, Workers: 1}
	netmode.ShapeLab(m, &cfg)
	l, err := lab.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Teardown() }) // harmless after the one below
	defer func() {
		if err := l.Teardown(); err != nil {
			t.Error(err)
		}
		AssertClean(t, id)
	}()
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AddPod(ctx, l, l.Hosts[0], "c1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Placements() {
		h := map[ground.Placement]*lab.Host{ground.SameHost: l.Hosts[0], ground.CrossHost: l.Hosts[len(l.Hosts)-1]}[p]
		if h == nil {
			continue
		}
		if _, err := m.AddPod(ctx, l, h, "s"+string(p[0])); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	for _, ns := range l.Namespaces() {
		fmt.Fprintf(&b, "== %s\n%s", ns, nsState(t, ns))
	}
	norm := strings.NewReplacer(lab.Prefix+id+"-", lab.Prefix+"ID-", l.Dir, "STATE")
	return norm.Replace(b.String()), norm.Replace(strings.Join(l.Commands(), "\n"))
}

// volatile are the parts of `ip -d` output that differ between two builds
// of the same thing: interface indexes, addresses the kernel picks at
// random, counters and timers.
var volatile = []*regexp.Regexp{
	regexp.MustCompile(`^\d+: `),
	regexp.MustCompile(`@if\d+`),
	regexp.MustCompile(`link-netnsid \d+`),
	regexp.MustCompile(`(link/ether|permaddr) [0-9a-f:]{17}`),
	regexp.MustCompile(`bridge_id \S+|designated_root \S+|root_id \S+|bridge_id|designated_(port|bridge|cost) \S+`),
	regexp.MustCompile(`(hello|tcn|topology_change|gc|message_age|forward_delay|hold)_timer +[0-9.]+`),
	regexp.MustCompile(`\b(port_id|port_no) \S+`),
	regexp.MustCompile(`inet6 fe80::\S+`),
	regexp.MustCompile(`(valid|preferred)_lft \S+`),
	regexp.MustCompile(`\b(used|updated) \S+`),
	regexp.MustCompile(`state (UP|DOWN|UNKNOWN|LOWERLAYERDOWN)`), // carrier races a dump taken at once
	regexp.MustCompile(`<[A-Z_,-]+>`),
	regexp.MustCompile(`bridge_slave state \S+`), // the port forwards once the kernel's link watch has seen its carrier (≤ 1 s)
	regexp.MustCompile(`\b(parentbus|parentdev) \S+`),
}

// nsState is a namespace's network configuration as text, volatile
// parts masked, lines sorted.
func nsState(t testing.TB, ns string) string {
	t.Helper()
	var lines []string
	for _, args := range [][]string{
		{"ip", "-n", ns, "-d", "-o", "link", "show"},
		{"ip", "-n", ns, "-o", "addr", "show"},
		{"ip", "-n", ns, "route", "show", "table", "all"},
		{"ip", "-n", ns, "neigh", "show", "nud", "permanent"},
		{"bridge", "-n", ns, "fdb", "show", "permanent"}, // the entries with a dst: those programmed
		{"ip", "netns", "exec", ns, "sysctl", "-e", "net.ipv4.ip_forward", "net.ipv4.conf.all.proxy_arp",
			"net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.bridge.bridge-nf-call-iptables"},
	} {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if strings.Contains(line, "fe80::") || strings.Contains(line, "ff00::") {
				continue // link-local IPv6 appears as the kernel gets to it
			}
			if args[0] == "bridge" && !strings.Contains(line, " dst ") {
				continue // what bridges learn and the kernel adds for multicast
			}
			for _, re := range volatile {
				line = re.ReplaceAllString(line, "~")
			}
			lines = append(lines, strings.Join(strings.Fields(line), " "))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// firstDiff shows the first lines where a and b differ, with some context.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d\nnetlink:  %s\ncommands: %s", i+1, x, y)
		}
	}
	return "(equal)"
}
