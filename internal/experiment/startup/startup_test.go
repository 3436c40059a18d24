package startup

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 20; i++ {
		ds = append(ds, time.Duration(21-i)*time.Millisecond)
	}
	s := Summarize(ds)
	want := map[string]float64{"mean": 10.5, "p50": 10, "p95": 19, "min": 1, "max": 20}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("%s = %v, want %v", k, s[k], v)
		}
	}
	if Summarize(nil) != nil {
		t.Error("summary of nothing should be absent")
	}
}
