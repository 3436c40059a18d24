package ipvs

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/svc/svctest"
)

func TestGolden(t *testing.T) {
	svctest.Golden(t, "ipvs", Render(svctest.GoldenServices()).Text())
}

func TestUnsupportedKernel(t *testing.T) {
	k := netmode.ParseKernelConfig(strings.NewReader("CONFIG_DUMMY=y\n# CONFIG_IP_VS is not set\n"))
	found := func(string) (string, error) { return "/usr/sbin/x", nil }
	err := svc.CheckWith(&LB{}, k, found)
	if err == nil || !errors.Is(err, svc.ErrUnsupported) || !strings.Contains(err.Error(), "CONFIG_IP_VS") {
		t.Fatalf("check on a kernel without IP_VS: %v; want an unsupported error naming CONFIG_IP_VS", err)
	}
	all := "CONFIG_IP_VS=m\nCONFIG_IP_VS_PROTO_TCP=y\nCONFIG_IP_VS_PROTO_UDP=y\nCONFIG_IP_VS_RR=m\nCONFIG_IP_SET_HASH_IPPORT=m\nCONFIG_DUMMY=y\n"
	if err := svc.CheckWith(&LB{}, netmode.ParseKernelConfig(strings.NewReader(all)), found); err != nil {
		t.Errorf("check on a kernel with IP_VS: %v", err)
	}
}

func TestRender(t *testing.T) {
	c := Render(svctest.GoldenServices())
	if !strings.Contains(c.IPVS, "-a -t 10.96.0.10:80 -r 10.244.3.2:8080 -m -w 1") || !strings.Contains(c.IPVS, "-A -u 10.96.0.11:53 -s rr") {
		t.Errorf("ipvs text:\n%s", c.IPVS)
	}
	if len(c.Addrs) != 3 {
		t.Errorf("addresses on %s: %v, want 3", Device, c.Addrs)
	}
}
