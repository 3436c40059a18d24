package nftables

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/svc/svctest"
)

func TestGolden(t *testing.T) {
	svctest.Golden(t, "nftables", svctest.Recorded(t, &LB{}))
}

func TestRules(t *testing.T) {
	svcs := svctest.GoldenServices()
	text, chains := Rules(svcs, nil)
	for _, want := range []string{
		"numgen random mod 3 vmap { 0 : goto endpoint-",
		"add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 ",
		"add element ip kube-proxy no-endpoint-services { 10.96.0.12 . tcp . 80 ",
		"meta l4proto udp dnat to 10.244.2.2:8080",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rules lack %q", want)
		}
	}
	if len(chains) != 6 {
		t.Errorf("%d chains, want 6", len(chains))
	}
	text2, _ := Rules(svcs[1:], chains)
	if n := strings.Count(text2, "delete chain"); n != 4 {
		t.Errorf("%d chains deleted after removing web, want 4", n)
	}
}
