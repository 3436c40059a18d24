package recommend

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/registry"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// Constraint is one --constraint: what the user's infrastructure allows or
// demands. It reads the traits networks declare (netmode.Traits) and this
// host's kernel; it never names a network.
type Constraint struct {
	Name  string
	Value int // cloud-route-limit's number
}

// The constraints.
const (
	NoL2Adjacency   = "no-l2-adjacency"
	CloudRouteLimit = "cloud-route-limit"
	Encryption      = "encryption"
	KernelFeatures  = "kernel-features-of-this-host"
)

var constraintHelp = map[string]string{
	NoL2Adjacency:   "the hosts are not on one L2 segment: removes networks that route to the peer host on-link",
	CloudRouteLimit: "=N: the cloud route table holds N routes: networks needing one per node are limited to N nodes",
	Encryption:      "pod traffic between hosts must be encrypted: keeps only networks that can encrypt",
	KernelFeatures:  "removes networks this host's kernel or tools cannot build",
}

// ConstraintNames lists the constraints, with what each does.
func ConstraintNames() []string {
	return []string{NoL2Adjacency, CloudRouteLimit + "=N", Encryption, KernelFeatures}
}

// ParseConstraints reads a comma-separated --constraint list.
func ParseConstraints(s string) ([]Constraint, error) {
	var out []Constraint
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, hasVal := strings.Cut(part, "=")
		if _, ok := constraintHelp[name]; !ok {
			return nil, fmt.Errorf("unknown constraint %q;%s use %s", name, registry.Suggest(name, ConstraintNames()), strings.Join(ConstraintNames(), ", "))
		}
		c := Constraint{Name: name}
		switch {
		case name == CloudRouteLimit:
			n, err := strconv.Atoi(val)
			if !hasVal || err != nil || n < 1 {
				return nil, fmt.Errorf("constraint %q: want %s=N with N the routes the cloud's table holds, e.g. %s=50", part, name, name)
			}
			c.Value = n
		case hasVal:
			return nil, fmt.Errorf("constraint %q takes no value; write %s", part, name)
		}
		out = append(out, c)
	}
	return out, nil
}

// applyConstraints says why c is removed (why non-empty), or what the
// constraints note about it.
func applyConstraints(run *result.Run, c Candidate, cons []Constraint) (notes []string, why string) {
	if len(cons) == 0 {
		return nil, ""
	}
	m, err := netmode.Get(c.Network)
	if err != nil {
		if c.Network == result.BaselineNetwork {
			return nil, ""
		}
		return []string{"not a network this cnperf knows: constraints not checked"}, ""
	}
	t := netmode.TraitsOf(m)
	for _, k := range cons {
		switch k.Name {
		case NoL2Adjacency:
			if t.L2Adjacency != "" {
				return nil, "needs the hosts on one L2 segment (" + t.L2Adjacency + ")"
			}
		case CloudRouteLimit:
			if t.RouteLimitOption != "" {
				return nil, fmt.Sprintf("needs a cloud route per node: at most %d nodes with %s=%d", k.Value, k.Name, k.Value)
			}
		case Encryption:
			if t.Encryption == "" {
				return nil, "does not encrypt pod traffic between hosts"
			}
			note := "encrypts only with --mode-opt " + t.Encryption
			if !strings.Contains(strings.Join(run.Command, " "), t.Encryption) {
				note += "; this run measured it without (its command has no " + t.Encryption + ")"
			}
			notes = append(notes, note)
		case KernelFeatures:
			if err := netmode.Check(m); err != nil {
				return nil, "cannot be built here: " + err.Error()
			}
		}
	}
	return notes, ""
}

// Write prints the rankings: each candidate with its score and, per rule,
// the figure it read with its interval and its ratio to the baseline.
func Write(w io.Writer, rs []Result) {
	for i, r := range rs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "profile %s", r.Profile)
		if r.Placement != "" {
			fmt.Fprintf(w, ", %s", r.Placement)
		}
		fmt.Fprintln(w, ":")
		if r.Undecided != "" {
			fmt.Fprintf(w, "  undecided: %s\n", r.Undecided)
		}
		for _, c := range r.Ranked {
			var rel []string
			if len(c.TiedWith) > 0 {
				var names []string
				for _, t := range c.TiedWith {
					names = append(names, t.String())
				}
				rel = append(rel, "tie with "+strings.Join(names, ", ")+": no figure separates them")
			}
			for _, t := range c.TradeOffs {
				rel = append(rel, fmt.Sprintf("trade-off with %s: %s favours %s, %s favours %s", t.Other, strings.Join(t.For, ", "), c.Candidate, strings.Join(t.Against, ", "), t.Other))
			}
			for _, b := range c.Behind {
				rel = append(rel, fmt.Sprintf("behind %s: %s", b.Other, strings.Join(b.Against, ", ")))
			}
			line := fmt.Sprintf("  %d. %s  score %.2f", c.Place, c.Candidate, c.Score)
			if len(rel) > 0 {
				line += " (" + strings.Join(rel, "; ") + ")"
			}
			fmt.Fprintln(w, line)
			for _, rd := range c.Readings {
				fmt.Fprintf(w, "     %s\n", reason(rd))
			}
			for _, n := range c.Notes {
				fmt.Fprintf(w, "     note: %s\n", n)
			}
		}
		if f := r.Family; f.Size > 0 && len(r.Ranked) > 0 {
			if f.Method == stats.HolmMethod {
				fmt.Fprintf(w, "  family: %d comparisons of two candidates on one figure; a figure separates them only after Holm's correction for all %d (the chance of any false separation at most %g): %d separate after it, of %d alone (--uncorrected: each alone)\n", f.Size, f.Size, f.Alpha, f.After, f.Before)
			} else {
				fmt.Fprintf(w, "  family: %d comparisons of two candidates on one figure, each at %g alone (--uncorrected): some separations may be chance\n", f.Size, f.Alpha)
			}
		}
		for _, c := range r.Chains {
			fmt.Fprintf(w, "  %s\n", c)
		}
		for _, x := range r.Removed {
			fmt.Fprintf(w, "  removed %s: %s\n", x.Candidate, x.Reason)
		}
		for _, k := range r.Skipped {
			fmt.Fprintf(w, "  not measured here: %s\n", k)
		}
		if r.NoIntervals && len(r.Ranked) > 0 {
			fmt.Fprintln(w, "  no intervals: the run had one round, so no difference was tested and every candidate shares the first place; rerun with --repeat 5")
		}
	}
	if slices.ContainsFunc(rs, func(r Result) bool { return len(r.Ranked) > 0 }) {
		fmt.Fprintln(w, "places: a candidate is above another only when a figure the profile weighs separates them in its favour (the two cells paired by round: their ratio differs, p < 0.05 and its interval beyond 1 ± 5 %) and none in the other's; ties and trade-offs share a place, and so do candidates a chain links (A above B, B above C) where two of them are not separated: every candidate of a place is separated above every candidate of a later place.")
		fmt.Fprintln(w, "score (orders a place only): weighted geometric mean over the rules of each figure relative to the best candidate (1 = best on every figure); `cnperf recommend --rules` lists the rules.")
	}
}

// reason reads like "tcp_rr p99 us 80.1 [77.0, 83.2], 1.05x baseline [1.01, 1.09] (tail of a ...)".
func reason(rd Reading) string {
	f := rd.Figure
	unit := f.Unit
	if strings.Contains(f.Label, unit) {
		unit = ""
	}
	wl := rd.Workload
	if rd.Step != "" {
		wl += " (" + rd.Step + ")"
	}
	s := fmt.Sprintf("%s %s %s", wl, f.Label, num(f.Display(rd.Median)))
	if unit != "" {
		s += " " + unit
	}
	if rd.HasCI {
		s += fmt.Sprintf(" [%s, %s]", num(f.Display(rd.Lo)), num(f.Display(rd.Hi)))
	}
	if v := rd.Vs; v != nil && v.Ratio != 0 {
		against := "baseline"
		if v.Against.LB != "" {
			against = "pod IP"
		}
		mark := "?"
		switch stats.VerdictOf(*v) {
		case stats.Differs:
			mark = ""
		case stats.Equivalent:
			mark = "="
		}
		s += fmt.Sprintf(", %s%.2fx %s", mark, v.Ratio, against)
		if v.CILevel > 0 {
			s += fmt.Sprintf(" [%.2f, %.2f]", v.CILow, v.CIHigh)
		}
	}
	s += fmt.Sprintf(" -> %.2f of best (%s, weight %g)", rd.Rel, rd.Rule.Why, rd.Rule.Weight)
	return s
}

func num(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// WriteRules prints the rule table.
func WriteRules(w io.Writer) {
	fmt.Fprintln(w, "profile            weight  metric (cells)                                      reads")
	for _, r := range Rules {
		fmt.Fprintf(w, "%-18s %-6g  %-51s %s\n", r.Profile, r.Weight, r.Metric+" ("+string(r.Cells)+")", r.Why)
	}
	fmt.Fprintln(w, "\nconstraints:")
	for _, n := range ConstraintNames() {
		k, _, _ := strings.Cut(n, "=")
		fmt.Fprintf(w, "  %-32s %s\n", n, constraintHelp[k])
	}
}

// CheckProfile checks a profile's name (required) and parses the
// constraints given with it.
func CheckProfile(profile, constraints string) ([]Constraint, error) {
	if profile == "" {
		return nil, fmt.Errorf("--profile is required: one of %s", strings.Join(Profiles(), ", "))
	}
	if !slices.Contains(Profiles(), profile) {
		return nil, fmt.Errorf("unknown profile %q;%s use one of %s", profile, registry.Suggest(profile, Profiles()), strings.Join(Profiles(), ", "))
	}
	return ParseConstraints(constraints)
}
