package standalone

import (
	"flag"
	"slices"

	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/workload"
)

// RegisterFlags adds to fs the options the load workloads declare, but
// --server (the target is the server); the function it returns gives the
// values set, by name, once fs is parsed.
func RegisterFlags(fs *flag.FlagSet) func() map[string]string {
	isLoad := func(name string) bool { return slices.Contains(Workloads(), name) }
	extra := map[string]*string{}
	for _, f := range workload.Flags() {
		if f.Name == "server" || !slices.ContainsFunc(workload.Takers(f.Name), isLoad) {
			continue
		}
		extra[f.Name] = option.FlagVar(fs, f.Name, f.Usage, f.Bool)
	}
	return func() map[string]string {
		out := map[string]string{}
		for k, v := range extra {
			if *v != "" {
				out[k] = *v
			}
		}
		return out
	}
}
