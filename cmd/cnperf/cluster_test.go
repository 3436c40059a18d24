package main

import (
	"errors"
	"flag"
	"strings"
	"testing"
)

// Bad `cnperf cluster` input: one line naming the fix, exit status 2,
// before anything is made (none of these needs root or a cluster).
func TestClusterBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "name a command: up, down, status, kubectl, selftest; see `cnperf cluster --help`"},
		{[]string{"start"}, `unknown cluster command "start"; use one of up, down`},
		{[]string{"stauts"}, `unknown cluster command "stauts"; did you mean "status"?`},
		{[]string{"up", "--nodes", "0"}, "0 nodes; use --nodes 1 to 99"},
		{[]string{"up", "--nodes", "x"}, `--nodes "x": want a whole number`},
		{[]string{"up", "--cni", "calico"}, "use --cni bridge, flannel-vxlan, flannel-host-gw"},
		{[]string{"up", "--proxy-mode", "userspace"}, "use --proxy-mode iptables (the default), nftables or ipvs"},
		{[]string{"up", "--iptables", "xt"}, "use --iptables legacy (the default) or nft"},
		{[]string{"down", "now"}, `unexpected argument "now"`},
		{[]string{"up", "--node", "3"}, `unknown flag --node; did you mean "--nodes"?`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			err := call("cluster", c.args)
			var ec exitCode
			switch {
			case err == nil:
				t.Fatal("accepted")
			case !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n"):
				t.Errorf("error %q, want one line saying %q", err, c.want)
			case !errors.As(err, &ec) || ec != 2:
				t.Errorf("exit status %d, want 2 (usage)", ec)
			}
		})
	}
	if err := call("cluster", []string{"up", "-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("cluster up -h: %v, want the help (exit 0)", err)
	}
}
