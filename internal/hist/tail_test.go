package hist

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSignificant(t *testing.T) {
	cases := []struct {
		n    int
		q    float64
		want bool
	}{
		{99, 99, false}, {100, 99, true}, {999, 99.9, false}, {1000, 99.9, true},
		{99999, 99.999, false}, {100000, 99.999, true}, {1, 100, true}, {0, 100, false},
	}
	for _, c := range cases {
		h := New()
		h.RecordN(time.Millisecond, int64(c.n))
		if got := h.Significant(c.q); got != c.want {
			t.Errorf("%d samples, p%v: significant=%v, want %v", c.n, c.q, got, c.want)
		}
	}
}

func TestWriteHgrm(t *testing.T) {
	h := New()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	var b bytes.Buffer
	if err := h.WriteHgrm(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// the standard header and footer, values in microseconds
	if !strings.HasPrefix(out, " Value\tPercentile\tTotalCount\t1/(1-Percentile)") {
		t.Fatalf("no .hgrm header:\n%s", out[:min(len(out), 200)])
	}
	if !strings.Contains(out, "#[Max     =     1000.") || !strings.Contains(out, "Total count    =         1000]") {
		t.Fatalf("footer wrong:\n%s", out[max(0, len(out)-300):])
	}
	c := h.Clone()
	h.Reset()
	if c.Count() != 1000 || h.Count() != 0 {
		t.Fatalf("clone shares state with its source")
	}
}
