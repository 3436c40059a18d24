package registry

import "testing"

func TestSuggest(t *testing.T) {
	names := []string{"bridge", "host", "host-gw", "vxlan", "weave", "calico-bgp", "calico-ipip"}
	for _, c := range []struct{ name, want string }{
		{"vxlna", ` did you mean "vxlan"?`},    // a swap
		{"vxln", ` did you mean "vxlan"?`},     // a letter missing
		{"hostgw", ` did you mean "host-gw"?`}, // a dash missing
		{"calico-bgpp", ` did you mean "calico-bgp"?`},
		{"brdge", ` did you mean "bridge"?`},
		{"hots", ` did you mean "host"?`},
		{"flannel", ""}, // nothing close
		{"ab", ""},
		{"vxlan", ""}, // itself: not a misspelling
	} {
		if got := Suggest(c.name, names); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	r := New[int]("network", "`cnperf networks` lists them")
	r.Register("vxlan", 1)
	r.Register("host-gw", 2)
	if _, err := r.Get("vxlna"); err == nil || err.Error() != "unknown network \"vxlna\"; did you mean \"vxlan\"? `cnperf networks` lists them (host-gw, vxlan)" {
		t.Errorf("Get(vxlna): %v", err)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"networks", "workloads", "duration", "repeat", "mode-opt", "lb"}
	for in, want := range map[string]string{
		"netwroks": "networks", "network": "networks", "duraton": "duration", "repeats": "repeat",
		"mode_opt": "mode-opt", "lbs": "lb", "zzz": "", "work": "workloads", "placement": "",
	} {
		if got := Closest(in, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}
