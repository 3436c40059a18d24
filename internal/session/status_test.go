package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/result"
)

// TestCellsStatus: a run with failed measurements exits 4 and lists them
// with their causes; one without exits 0 (issue 23, finding 2).
func TestCellsStatus(t *testing.T) {
	ok := result.Result{Network: "bridge", Placement: "same-host", Workload: "tcp_rr", Round: 1}
	bad := ok
	bad.Workload, bad.Error = "tcp_stream", "server on s1: its process 42 is stopped (SIGSTOP)"
	if err := CellsStatus(&result.Run{Results: []result.Result{ok, ok}}, "r.json"); err != nil {
		t.Fatalf("all measured: %v", err)
	}
	run := &result.Run{Results: []result.Result{ok, bad}}
	err := CellsStatus(run, "r.json")
	var ec exitcode.Code
	if !errors.As(err, &ec) || ec != 4 || !strings.Contains(err.Error(), "1 of 2 measurements failed") {
		t.Fatalf("err %v (status %d), want exit 4 counting the failure", err, ec)
	}
	var b strings.Builder
	ListFailed(&b, run)
	if !strings.Contains(b.String(), "bridge same-host tcp_stream round 1: server on s1: its process 42 is stopped") {
		t.Errorf("list %q, want the failed cell with its cause", b.String())
	}
}
