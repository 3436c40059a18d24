// Package result defines cnperf's stable JSON result schema (cnperf/run/v1)
// and captures the environment every result is only comparable with.
// Reports read these types only; nothing here knows how a number was made.
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Schema is the value of the "schema" field; bump it on an incompatible change.
const Schema = "cnperf/run/v1"

// Run is one cnperf invocation: its environment and every result.
type Run struct {
	Schema      string      `json:"schema"`
	Version     string      `json:"cnperf_version"`
	StartedAt   time.Time   `json:"started_at"`
	FinishedAt  time.Time   `json:"finished_at,omitempty"`
	Command     []string    `json:"command,omitempty"`
	Environment Environment `json:"environment"`
	Results     []Result    `json:"results"`
	Skipped     []Skip      `json:"skipped,omitempty"`
}

// Skip records a network/workload/placement that was asked for but could not
// run here, with the reason, so a missing row is never silent.
type Skip struct {
	Network   string `json:"network"`
	Workload  string `json:"workload,omitempty"`
	Placement string `json:"placement,omitempty"`
	Reason    string `json:"reason"`
}

// Result is one measurement: a workload over a network in one placement.
type Result struct {
	Network   string         `json:"network"`
	Workload  string         `json:"workload"`
	Placement string         `json:"placement"`
	LB        string         `json:"lb,omitempty"`
	Services  int            `json:"services,omitempty"`
	Step      string         `json:"step,omitempty"` // which step of a multi-step workload
	Params    map[string]any `json:"params"`
	Metrics   Metrics        `json:"metrics"`
	Histogram string         `json:"histogram,omitempty"` // compressed HdrHistogram (ns)
	Path      string         `json:"path,omitempty"`      // what the client dialled
	Error     string         `json:"error,omitempty"`
}

// Metrics holds the figures of a result. A metric that does not apply to a
// workload is absent (nil), never zero.
type Metrics struct {
	ThroughputBps    *float64           `json:"throughput_bps,omitempty"`
	TransactionsPerS *float64           `json:"transactions_per_s,omitempty"`
	LatencyUs        map[string]float64 `json:"latency_us,omitempty"`
	LossRatio        *float64           `json:"loss_ratio,omitempty"`
	Transactions     *int64             `json:"transactions,omitempty"`
	Bytes            *int64             `json:"bytes,omitempty"`
	Messages         *int64             `json:"messages,omitempty"`
	Errors           *int64             `json:"errors,omitempty"`
	DurationS        *float64           `json:"duration_s,omitempty"`
	ClientCPUSPerS   *float64           `json:"client_cpu_s_per_s,omitempty"`
	ServerCPUSPerS   *float64           `json:"server_cpu_s_per_s,omitempty"`
	Extra            map[string]float64 `json:"extra,omitempty"`
	// Histograms are encoded HDR histograms (ns) beside the result's main
	// one, by name: "uncorrected" latency and "send_lag" of open-loop runs.
	Histograms map[string]string `json:"histograms,omitempty"`
	// StartupMs is the startup workload's create-to-first-reply time:
	// mean, p50, p95 (and min, max) over the repetitions.
	StartupMs map[string]float64 `json:"startup_ms,omitempty"`
	// PhasesMs is the mean time of each start-up phase (namespace, links,
	// control_plane, first_packet, and any a mode marks itself).
	PhasesMs map[string]float64 `json:"phases_ms,omitempty"`
}

// F and I make optional metric pointers.
func F(v float64) *float64 { return &v }

// I makes an optional integer metric.
func I(v int64) *int64 { return &v }

// Write stores the run as indented JSON.
func (r *Run) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// Read loads a run written by Write and checks its schema.
func Read(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a cnperf result: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, this cnperf reads %q", path, r.Schema, Schema)
	}
	return &r, nil
}
