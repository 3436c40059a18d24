package iptables

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/svc/svctest"
)

func TestGolden(t *testing.T) {
	svctest.Golden(t, "iptables", svctest.Recorded(t, &LB{}))
}

func TestRules(t *testing.T) {
	svcs := svctest.GoldenServices()
	text, chains := Rules(svcs, nil)
	// 2 services with endpoints: 2 KUBE-SVC + 4 KUBE-SEP chains
	if len(chains) != 6 {
		t.Errorf("%d chains, want 6: %v", len(chains), chains)
	}
	for _, want := range []string{
		"--probability 0.3333333333 -j KUBE-SEP-",
		"--probability 0.5000000000 -j KUBE-SEP-",
		"-j DNAT --to-destination 10.244.3.2:8080",
		`"default/empty:tcp has no endpoints" -m tcp -p tcp -d 10.96.0.12/32 --dport 80 -j REJECT`,
		"! -s 10.244.0.0/16 -j KUBE-MARK-MASQ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rules lack %q", want)
		}
	}
	// a second render without the first service deletes its chains
	text2, chains2 := Rules(svcs[1:], chains)
	if len(chains2) != 2 {
		t.Errorf("%d chains after removing web, want 2", len(chains2))
	}
	if n := strings.Count(text2, "\n-X KUBE-"); n != 4 {
		t.Errorf("%d chains deleted, want 4:\n%s", n, text2)
	}
	// above 1000 endpoints kube-proxy drops per-endpoint comments
	var many = svcs[:1]
	for len(many[0].Endpoints) <= largeClusterLimit {
		many[0].Endpoints = append(many[0].Endpoints, many[0].Endpoints...)
	}
	if big, _ := Rules(many, nil); strings.Contains(big, "->") {
		t.Error("large cluster rules still carry endpoint comments")
	}
}

func TestChainName(t *testing.T) {
	a := ChainName("KUBE-SVC-", "default/web:tcp", "tcp")
	if len(a) != len("KUBE-SVC-")+16 || a == ChainName("KUBE-SVC-", "default/web2:tcp", "tcp") {
		t.Errorf("chain name %q: want 16 hashed characters, distinct per service", a)
	}
}
