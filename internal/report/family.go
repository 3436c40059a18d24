package report

import (
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// Uncorrected, set by `cnperf report --uncorrected`, prints each ratio's
// own verdict, at alpha alone, instead of the family-corrected ones.
var Uncorrected bool

// Corrected is run with the verdicts of the ratios its table prints (the
// family: every printed ratio with an interval) corrected by Holm's
// procedure (stats.CorrectFamily), and what the correction did; the run
// itself is not changed (the file keeps each comparison's own verdict).
// With Uncorrected it is run, and a family of its size with nothing
// corrected.
func Corrected(run *result.Run) (*result.Run, stats.Family, []string) {
	cp := *run
	cp.Summaries = append([]result.Summary(nil), run.Summaries...)
	var cs []*result.Comparison
	var names []string
	for i, s := range cp.Summaries {
		if s.VsBaseline == nil || searchStep(s.Cell.Step) {
			continue
		}
		if f, ok := kit.FigureOf(s.Cell.Workload, s.Figure); !ok || !f.Ratio {
			continue
		}
		c := *s.VsBaseline
		cp.Summaries[i].VsBaseline = &c
		cs = append(cs, &c)
		names = append(names, stats.CellName(s.Cell)+" "+summaryLabel(s))
	}
	if Uncorrected {
		var copies []*result.Comparison
		for _, c := range cs {
			x := *c
			copies = append(copies, &x)
		}
		f := stats.CorrectFamily(copies, 0)
		return run, stats.Family{Method: "none", Alpha: f.Alpha, Size: f.Size, Before: f.Before, After: f.Before}, nil
	}
	alpha := 0.0
	if len(cs) > 0 {
		alpha = cs[0].Alpha
	}
	f := stats.CorrectFamily(cs, alpha)
	var demoted []string
	for _, i := range f.Demoted {
		demoted = append(demoted, names[i])
	}
	return &cp, f, demoted
}

// familyLine says how many verdicts the table printed and what the
// correction did ("" for a family without tests).
func familyLine(f stats.Family, demoted []string) string {
	if f.Size == 0 {
		return ""
	}
	if f.Method != stats.HolmMethod {
		return fmt.Sprintf("family: %d tested ratios printed, each verdict at %g alone (--uncorrected): with that many, some \"differs\" may be chance; without --uncorrected, Holm's correction keeps the chance of any false \"differs\" at or below %g", f.Size, f.Alpha, f.Alpha)
	}
	s := fmt.Sprintf("family: %d tested ratios printed; their \"differs\" marks are corrected by Holm's procedure, so the chance that any of them is false is at or below %g (docs/results.md): %d differ after it, of %d alone", f.Size, f.Alpha, f.After, f.Before)
	if len(demoted) > 0 {
		s += "; differ alone but not after it, so ? here: " + strings.Join(demoted, ", ")
	}
	return s + "; --uncorrected shows each ratio's own verdict"
}
