package netmode

import "github.com/cnperf/cnperf/internal/option"

// Common are the mode options the lab itself honours, whatever the mode.
var Common = []option.Spec{
	{Name: "underlay", Kind: option.Enum, Values: []string{"switched", "routed"}, Default: "switched",
		Help: "the hosts on one switched subnet, or each on its own subnet behind a router"},
}

// OptionsOf is every option mode m takes: the Common ones, then its own.
func OptionsOf(m Mode) []option.Spec {
	own := m.Options()
	out := make([]option.Spec, 0, len(Common)+len(own))
	out = append(out, Common...)
	for _, s := range own {
		if _, dup := option.Find(out, s.Name); !dup {
			out = append(out, s)
		}
	}
	return out
}

// ValidateOptions checks the mode options set against what m declares: an
// unknown key or a malformed value is an error that lists m's options.
func ValidateOptions(m Mode, set map[string]string) error {
	return option.Validate("network "+m.Name(), OptionsOf(m), set)
}
