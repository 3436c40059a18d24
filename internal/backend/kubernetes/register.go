package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/option"
)

// Flags are the backend's `cnperf run` flags.
var Flags = []option.Spec{
	{Name: "kubeconfig", Kind: option.String, Help: "--backend kubernetes: the cluster's kubeconfig (default $KUBECONFIG, then ~/.kube/config)"},
	{Name: "context", Kind: option.String, Help: "--backend kubernetes: the kubeconfig context (default its current one)"},
	{Name: "namespace-prefix", Kind: option.String, Help: "--backend kubernetes: each deployment's namespace is PREFIX-<run id> (default cnperf)"},
	{Name: "image", Kind: option.String, Help: "--backend kubernetes: the agent image the nodes run, a static cnperf at /cnperf (cnperf image build / push make it; see docs/kubernetes.md)"},
	{Name: "image-pull-secret", Kind: option.String, Help: "--backend kubernetes: [NAMESPACE/]NAME of a kubernetes.io/dockerconfigjson Secret the nodes pull --image with (copied into each run's namespace; default namespace: the context's)"},
}

func init() { Flags = append(Flags, PlacementSpecs()...) }

// OptionsOf reads the options from the flags' values (the placement
// flags' checked by CheckOptions).
func OptionsOf(values map[string]string) Options {
	o, _ := CheckOptions(values)
	return o
}

// CheckOptions reads the options from the flags' values and checks them.
func CheckOptions(values map[string]string) (Options, error) {
	get := func(n string) string { return option.Get(Flags, values, n) }
	o := Options{Kubeconfig: get("kubeconfig"), Context: get("context"), Prefix: get("namespace-prefix"), Image: get("image"), PullSecret: get("image-pull-secret")}
	var err error
	if o.Placement, err = PlacementOf(values); err != nil {
		return o, err
	}
	return o, o.Validate()
}

func init() {
	backend.Register(backend.Info{
		Name:       Name,
		Summary:    "pods on the cluster --kubeconfig names",
		Rank:       3,
		Flags:      Flags,
		CleanFlags: []string{"kubeconfig", "context"},
		CheckFlags: func(v map[string]string) error {
			_, err := CheckOptions(v)
			return err
		},
		Placements:      []backend.ExtraPlacement{{Name: CrossZone, As: ground.CrossHost, Help: "chooses nodes of two zones of a cluster"}},
		DefaultNetworks: []string{DefaultNetwork},
		New: func(c backend.Config) backend.Backend {
			o := OptionsOf(c.Flags)
			o.Placement.CrossZone = slices.Contains(c.Placements, CrossZone)
			return New(o, c.Lab.ID, c.Logf)
		},
		Cleaner:      cleaner{},
		CleanSummary: "namespaces labelled cnperf.run on the cluster --kubeconfig names",
	})
}

// cleaner deletes the namespaces dead runs left on the cluster, by label,
// and waits until they are gone.
type cleaner struct{}

func (cleaner) Clean(ctx context.Context, req cleanup.Request) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cl, err := Connect(ctx, OptionsOf(req.Flags))
	if err != nil {
		return nil, err
	}
	if err := cl.Reachable(ctx); err != nil {
		return nil, err
	}
	removed, kept, err := Clean(ctx, cl, req.ID, req.Force)
	for _, r := range removed {
		fmt.Fprintf(req.Out, "removed kubernetes run %s: namespaces %s\n", r.Run, strings.Join(r.Namespaces, " "))
	}
	for _, r := range kept {
		fmt.Fprintf(req.Out, "kept kubernetes run %s: still running or started elsewhere (use --force to remove it)\n", r.Run)
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(req.Out, "nothing to clean on the cluster")
	}
	return nil, err
}
