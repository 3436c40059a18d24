package hist

import (
	"testing"
	"time"
)

func TestMergeIsExact(t *testing.T) {
	a, b, all := New(), New(), New()
	for i := 1; i <= 10000; i++ {
		d := time.Duration(i) * time.Microsecond
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		all.Record(d)
	}
	enc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	b2, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	a.Merge(b2)
	if a.Count() != all.Count() {
		t.Fatalf("count %d, want %d", a.Count(), all.Count())
	}
	for _, q := range []float64{50, 90, 99, 99.9, 99.99, 100} {
		if a.Quantile(q) != all.Quantile(q) {
			t.Errorf("p%v: merged %v, direct %v", q, a.Quantile(q), all.Quantile(q))
		}
	}
}

func TestPercentilePrecision(t *testing.T) {
	h := New()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	cases := []struct {
		q    float64
		want time.Duration
	}{{50, 500 * time.Microsecond}, {99, 990 * time.Microsecond}, {100, 1000 * time.Microsecond}}
	for _, c := range cases {
		got := h.Quantile(c.q)
		diff := float64(got-c.want) / float64(c.want)
		if diff < -0.001 || diff > 0.001 {
			t.Errorf("p%v = %v, want %v within 0.1%%", c.q, got, c.want)
		}
	}
}

func TestClampNeverDrops(t *testing.T) {
	h := New()
	h.Record(0)
	h.Record(-5)
	h.Record(1000 * time.Second)
	if h.Count() != 3 {
		t.Fatalf("count %d, want 3", h.Count())
	}
}
