package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// Refresh recomputes the summaries and warnings of a run read from a file
// written by an older cnperf (a comparison without an estimator, or a
// noise warning on the point CV), so that its table shows today's
// estimator and verdicts. A file without summaries is left as it is (its
// table shows means, its page summarizes on the fly), and so is a current
// one. The comparisons an experiment stored in the results (vs_quiet,
// vs_untuned) are kept; their verdicts are read by stats.VerdictOf.
func Refresh(run *result.Run) {
	if run == nil || len(run.Summaries) == 0 {
		return
	}
	stale := false
	for _, s := range run.Summaries {
		for _, c := range []*result.Comparison{s.VsBaseline, s.VsReplica} {
			if c != nil && c.Estimator == "" {
				stale = true
			}
		}
	}
	for _, w := range run.Warnings {
		if strings.HasPrefix(w, stats.WarnNoisy) && !strings.Contains(w, "upper bound") {
			stale = true
		}
	}
	// a cluster's pod cell paired with a lab network that declares it
	// replicates another pod network than the cluster ran (the pairing of
	// files written before the declarations were heeded)
	if sys := run.Environment.System(result.SystemPodNetwork); sys != "" {
		for _, s := range run.Summaries {
			if c := s.VsReplica; c != nil && s.Cell.Network == stats.PodNetwork {
				if d := run.Environment.Replicas[result.ReplicaKey(result.ReplicaNetwork, c.Against.Network)]; d != "" && d != sys {
					stale = true
				}
			}
		}
	}
	if stale {
		stats.Summarize(run, FiguresOf)
	}
}

// Pool merges the rounds of several runs into one run, so that the same
// cells measured in several files are summarized and compared over every
// round at once (`cnperf report a.json b.json --pool`). Rounds are
// renumbered one file after the other: the first file keeps its rounds
// 1..n1, the second's become n1+1..n1+n2, and so on, so a round of one
// file is never paired with a round of another; within each file, cells
// stay paired by their own round. Results without a round (files from
// before rounds) keep round 0 and are compared unpaired. The pooled run has
// the first file's environment, a warning naming what differs in the
// others', the other files' own warnings (not the noise, busy and failure
// warnings, which Summarize recomputes over the pooled rounds), every skip
// once and every build. The lines returned say how the rounds were
// renumbered.
func Pool(ins []Input) (*result.Run, []string, error) {
	if len(ins) < 2 {
		return nil, nil, fmt.Errorf("--pool needs two results files or more, got %d: cnperf report a.json b.json --pool", len(ins))
	}
	first := ins[0].Run
	out := &result.Run{Schema: first.Schema, Version: first.Version, StartedAt: first.StartedAt, Environment: first.Environment,
		Command: []string{"cnperf", "report", "--pool"}}
	var lines []string
	offset := 0
	for _, in := range ins {
		r := in.Run
		out.Command = append(out.Command, in.Name+".json")
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(out.FinishedAt) {
			out.FinishedAt = r.FinishedAt
		}
		if r != first {
			if d := stats.EnvDiff(first.Environment, r.Environment); d != "" {
				out.Warnings = append(out.Warnings, fmt.Sprintf("pooled runs on different environments: %s against %s (%s): a difference may come from that", in.Name, ins[0].Name, d))
			}
			if r.Version != first.Version {
				out.Warnings = append(out.Warnings, fmt.Sprintf("pooled runs of different cnperf versions: %s %s, %s %s", ins[0].Name, first.Version, in.Name, r.Version))
			}
		}
		most := 0
		for _, res := range r.Results {
			most = max(most, res.Round)
		}
		for _, res := range r.Results {
			if res.Round > 0 {
				res.Round += offset
			}
			out.Results = append(out.Results, res)
		}
		switch {
		case most == 1:
			lines = append(lines, fmt.Sprintf("%s: round 1 is pooled round %d", in.Name, offset+1))
		case most == 0:
			lines = append(lines, fmt.Sprintf("%s: no rounds (a file from before them): its results are pooled unpaired", in.Name))
		default:
			lines = append(lines, fmt.Sprintf("%s: rounds 1-%d are pooled rounds %d-%d", in.Name, most, offset+1, offset+most))
		}
		offset += most
		out.Rounds += max(r.Rounds, most)
		out.Incomplete = out.Incomplete || r.Incomplete
		out.CellsPlanned += r.CellsPlanned
		out.CellsDone += r.CellsDone
		for _, s := range r.Skipped {
			if !slices.Contains(out.Skipped, s) {
				out.Skipped = append(out.Skipped, s)
			}
		}
		out.Builds = append(out.Builds, r.Builds...)
		for _, w := range r.Warnings {
			if !strings.HasPrefix(w, stats.WarnNoisy) && !strings.HasPrefix(w, stats.WarnBusy) && !strings.HasPrefix(w, stats.WarnFailed) {
				out.Warnings = append(out.Warnings, in.Name+": "+w)
			}
		}
	}
	stats.Summarize(out, FiguresOf)
	return out, lines, nil
}
