package report

import (
	"strings"
	"testing"
)

// The spectrum's note of percentiles with too few samples is in one
// order, by cell and then percentile (it was the order of a map's range,
// so two renderings of one file differed).
func TestSpectrumNoteOrder(t *testing.T) {
	for i := 0; i < 5; i++ {
		note := ""
		for _, s := range BuildPage(readInputs(t, "load_rates")).Sections {
			for _, c := range s.Charts {
				if strings.HasPrefix(c.Note, "too few samples for: ") && note == "" {
					note = c.Note
				}
			}
		}
		if !strings.HasPrefix(note, "too few samples for: baseline cross-host p99.9, baseline cross-host p99.99, baseline cross-host p99.999, host cross-host p99.9") {
			t.Fatalf("note %q", note)
		}
	}
}
