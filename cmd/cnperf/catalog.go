package main

import (
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
)

// The --json listings of `networks`, `workloads` and `suites`: what the
// tables show, whole, for a script (docs/results.md, "Listings").

type optionDoc struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Default string   `json:"default,omitempty"`
	Help    string   `json:"help"`
	Values  []string `json:"values,omitempty"`
}

func optionDocs(specs []option.Spec) []optionDoc {
	out := []optionDoc{}
	for _, s := range specs {
		out = append(out, optionDoc{s.Name, string(s.Kind), s.Default, s.Help, s.Values})
	}
	return out
}

type networkDoc struct {
	Name       string      `json:"name"`
	Summary    string      `json:"summary"`
	Placements []string    `json:"placements"`
	Here       bool        `json:"here"`              // this machine can build it
	WhyNot     string      `json:"why_not,omitempty"` // when it cannot, why
	Options    []optionDoc `json:"options"`
}

// networksJSON lists every network, whether this machine can build it,
// and its options; the options every network takes are "common_options".
func networksJSON(w io.Writer) error {
	doc := struct {
		Schema   string       `json:"schema"`
		Common   []optionDoc  `json:"common_options"`
		Networks []networkDoc `json:"networks"`
	}{Schema: "cnperf/networks/v1", Common: optionDocs(netmode.Common)}
	for _, n := range netmode.Names() {
		m, _ := netmode.Get(n)
		d := networkDoc{Name: n, Summary: m.Summary(), Placements: []string{}, Here: true, Options: optionDocs(m.Options())}
		for _, p := range m.Placements() {
			d.Placements = append(d.Placements, string(p))
		}
		if err := netmode.Check(m); err != nil {
			d.Here, d.WhyNot = false, err.Error()
		}
		doc.Networks = append(doc.Networks, d)
	}
	return writeJSON(w, doc)
}

type workloadDoc struct {
	Name string `json:"name"`
	// Kind is "workload" (runs between pods, with options) or "measure"
	// (an experiment's own measurement: startup, blocking...).
	Kind        string          `json:"kind"`
	Summary     string          `json:"summary"`
	Proto       string          `json:"proto,omitempty"`
	MessageSize int             `json:"default_message_size,omitempty"`
	Duration    string          `json:"default_duration,omitempty"`
	Figures     []result.Figure `json:"figures"`
	Options     []optionDoc     `json:"options"`
}

// workloadsJSON lists every workload and measure with the figures it
// reports (and which way each is better) and its options.
func workloadsJSON(w io.Writer) error {
	doc := struct {
		Schema    string        `json:"schema"`
		Workloads []workloadDoc `json:"workloads"`
	}{Schema: "cnperf/workloads/v1"}
	for _, n := range workload.Names() {
		wl, _ := workload.Get(n)
		var p workload.Params
		wl.Defaults(&p)
		d := workloadDoc{Name: n, Kind: "workload", Summary: wl.Summary(), Proto: wl.Proto(), MessageSize: p.MessageSize,
			Figures: append([]result.Figure{}, wl.Figures()...), Options: optionDocs(workload.OptionsOf(wl))}
		if p.Duration > 0 {
			d.Duration = p.Duration.String()
		}
		doc.Workloads = append(doc.Workloads, d)
	}
	for _, n := range workload.MeasureNames() {
		m, _ := workload.GetMeasure(n)
		doc.Workloads = append(doc.Workloads, workloadDoc{Name: n, Kind: "measure", Summary: m.Summary,
			Figures: append([]result.Figure{}, m.Figures...), Options: optionDocs(m.Options)})
	}
	return writeJSON(w, doc)
}

type suiteDoc struct {
	Name      string   `json:"name"`
	Summary   string   `json:"summary"`
	Source    string   `json:"source"`
	Workloads []string `json:"workloads"`
	Networks  []string `json:"networks"`
	Rounds    int      `json:"rounds"`
	Duration  string   `json:"duration,omitempty"`
	Cells     int      `json:"cells"` // network x workload x placement cases, before rounds and steps
}

// suitesJSON lists the suites with what each runs.
func suitesJSON(w io.Writer) error {
	doc := struct {
		Schema string     `json:"schema"`
		Suites []suiteDoc `json:"suites"`
	}{Schema: "cnperf/suites/v1"}
	for _, n := range suite.Names() {
		s, _ := suite.Get(n)
		d := suiteDoc{Name: n, Summary: s.Summary, Source: s.Source, Workloads: append([]string{}, s.Workloads...),
			Networks: []string{}, Rounds: max(s.Rounds, 1), Cells: len(s.Cases)}
		for _, c := range s.Cases {
			if !slices.Contains(d.Networks, c.Network) {
				d.Networks = append(d.Networks, c.Network)
			}
		}
		if s.Params.Duration > 0 {
			d.Duration = s.Params.Duration.Round(time.Millisecond).String()
		}
		doc.Suites = append(doc.Suites, d)
	}
	return writeJSON(w, doc)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
