package report

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// NDJSON writes runs' summaries as the body of an Elasticsearch or
// OpenSearch _bulk request: per cell and figure an action line
// {"index":{"_id":"..."}} and the document (NDJSONDoc) on the next line,
// each line one JSON object, the file ending in a newline. The action
// names no index (the request's URL does: POST /cnperf/_bulk) and its _id
// is the document's doc_id, made of the run id, the cell and the figure,
// so that sending a file twice replaces its documents rather than
// doubling them. A reader that wants the documents alone takes every
// second line (sed -n 'n;p', or jq 'select(.doc_id)').
func NDJSON(w io.Writer, ins []Input) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	ids := runIDs(ins)
	for i, in := range ins {
		for _, d := range NDJSONDocs(ids[i], in) {
			action := map[string]map[string]string{"index": {"_id": d.DocID}}
			if err := enc.Encode(action); err != nil {
				return err
			}
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// NDJSONDoc is one cell and figure of a run, with what it is only
// comparable with: a flat document a dashboard filters and plots without
// joins. Numbers are rounded as Decimal prints them.
type NDJSONDoc struct {
	DocID     string    `json:"doc_id"`
	Timestamp time.Time `json:"@timestamp"` // the run's start
	Schema    string    `json:"schema"`     // "cnperf/export/v1"
	RunID     string    `json:"run_id"`
	File      string    `json:"file"`
	Version   string    `json:"cnperf_version"`
	Network   string    `json:"network"`
	Workload  string    `json:"workload"`
	Placement string    `json:"placement"`
	LB        string    `json:"lb,omitempty"`
	Services  int       `json:"services,omitempty"`
	Step      string    `json:"step,omitempty"`
	Backend   string    `json:"backend"`
	Figure    string    `json:"figure"`
	Label     string    `json:"label,omitempty"`
	Better    string    `json:"better,omitempty"` // "higher" or "lower"
	N         int       `json:"n"`
	Value     float64   `json:"value"` // the median over the rounds
	CILow     *float64  `json:"ci_low,omitempty"`
	CIHigh    *float64  `json:"ci_high,omitempty"`
	CIMethod  string    `json:"ci_method,omitempty"`
	CV        float64   `json:"cv"`
	// VsBaseline and VsReplica are the figure's ratios, as in the
	// run file's summaries.
	VsBaseline  *NDJSONRatio        `json:"vs_baseline,omitempty"`
	VsReplica   *NDJSONRatio        `json:"vs_replica,omitempty"`
	Incomplete  bool                `json:"incomplete,omitempty"`
	Environment *result.Environment `json:"environment"`
}

// NDJSONRatio is a Comparison as a document holds it.
type NDJSONRatio struct {
	Against      string   `json:"against"` // the network compared with
	Ratio        float64  `json:"ratio"`
	CILow        *float64 `json:"ci_low,omitempty"`
	CIHigh       *float64 `json:"ci_high,omitempty"`
	P            *float64 `json:"p,omitempty"`
	Verdict      string   `json:"verdict"`             // differs, equivalent, undecided
	Direction    string   `json:"direction,omitempty"` // better, worse
	RoundsNeeded int      `json:"rounds_needed,omitempty"`
}

// ExportSchema names the documents' layout.
const ExportSchema = "cnperf/export/v1"

// NDJSONDocs are the documents of one run, runID naming it.
func NDJSONDocs(runID string, in Input) []NDJSONDoc {
	run := in.Run
	var docs []NDJSONDoc
	seen := map[string]bool{}
	for _, s := range kit.Summaries(run) {
		f, _ := describe(s.Cell.Workload, s.Figure)
		k := s.Cell
		d := NDJSONDoc{
			Timestamp: run.StartedAt.UTC(), Schema: ExportSchema, RunID: runID, File: in.Name, Version: run.Version,
			Network: k.Network, Workload: k.Workload, Placement: k.Placement, LB: k.LB, Services: k.Services, Step: k.Step,
			Backend: backendName(k.Backend), Figure: s.Figure, Label: f.Label, Better: string(f.Better),
			N: s.N, Value: rounded(s.Median), CIMethod: s.CIMethod, CV: rounded(s.CV),
			VsBaseline: ndjsonRatio(s.VsBaseline), VsReplica: ndjsonRatio(s.VsReplica),
			Incomplete: run.Incomplete, Environment: &run.Environment,
		}
		if s.CILevel > 0 {
			d.CILow, d.CIHigh = ptr(rounded(s.CILow)), ptr(rounded(s.CIHigh))
		}
		parts := []string{runID, k.Network, k.Workload, k.Placement, k.LB, count0(k.Services), k.Step, d.Backend, s.Figure}
		d.DocID = strings.Join(parts, "|")
		if seen[d.DocID] {
			continue
		}
		seen[d.DocID] = true
		docs = append(docs, d)
	}
	return docs
}

func ndjsonRatio(c *result.Comparison) *NDJSONRatio {
	if c == nil {
		return nil
	}
	r := &NDJSONRatio{Against: c.Against.Network, Ratio: rounded(c.Ratio), Verdict: stats.VerdictOf(*c), Direction: c.Direction, RoundsNeeded: c.RoundsNeeded}
	if c.CILevel > 0 {
		r.CILow, r.CIHigh, r.P = ptr(rounded(c.CILow)), ptr(rounded(c.CIHigh)), ptr(rounded(c.P))
	}
	return r
}

func ptr(v float64) *float64 { return &v }
