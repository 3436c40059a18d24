package report

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestIncompleteWords: the line of an incomplete run matches what
// happened; a run whose every cell finished is not "cut short or still
// going" (issue 23, finding 7: a finished docker-lab run said "12 of 12
// cells finished (cut short or still going)").
func TestIncompleteWords(t *testing.T) {
	for _, tc := range []struct {
		name          string
		done, planned int
		want, notWant string
	}{
		{"cut short", 5, 12, "5 of 12 cells finished (cut short", ""},
		{"all finished", 12, 12, "all 12 cells finished, but", "cut short"},
		{"no counts", 0, 0, "3 results recorded", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &result.Run{Incomplete: true, CellsDone: tc.done, CellsPlanned: tc.planned, Results: make([]result.Result, 3)}
			got := Incomplete(run)
			if !strings.Contains(got, tc.want) || (tc.notWant != "" && strings.Contains(got, tc.notWant)) {
				t.Errorf("%q, want %q and not %q", got, tc.want, tc.notWant)
			}
		})
	}
}
