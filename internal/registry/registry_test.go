package registry

import (
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[int]("network", "`cnperf networks` lists them")
	r.Register("vxlan", 1)
	r.Register("host-gw", 2)
	if v, err := r.Get("vxlan"); err != nil || v != 1 {
		t.Fatalf("Get(vxlan) = %v, %v", v, err)
	}
	_, err := r.Get("flanel")
	if err == nil || err.Error() != "unknown network \"flanel\"; `cnperf networks` lists them (host-gw, vxlan)" {
		t.Fatalf("error %v", err)
	}
	if got := strings.Join(r.Names(), ","); got != "host-gw,vxlan" {
		t.Fatalf("names %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a duplicate did not panic")
		}
	}()
	r.Register("vxlan", 3)
}
