package loadgen

import (
	"math/big"
	"testing"
)

func TestScheduleExact(t *testing.T) {
	for _, rate := range []uint64{1, 3, 7, 1000, 33333, 50000, 123457, 500000, 1e6} {
		s := Schedule{T0: 12345, Rate: rate}
		const n = 1_000_000
		var prev int64 = -1
		r := new(big.Int)
		for i := uint64(0); i < n; i++ {
			got := s.At(i)
			// exact: floor(i*1e9/rate), computed in big integers
			r.SetUint64(i)
			r.Mul(r, big.NewInt(1e9))
			r.Quo(r, new(big.Int).SetUint64(rate))
			if want := s.T0 + r.Int64(); got != want {
				t.Fatalf("rate %d: At(%d) = %d, want %d", rate, i, got, want)
			}
			if got < prev {
				t.Fatalf("rate %d: At(%d) went backwards", rate, i)
			}
			prev = got
		}
		// no drift: request rate*k is due exactly k seconds after the start
		for k := uint64(1); k <= 3600; k *= 60 {
			if got := s.At(rate * k); got != s.T0+int64(k)*1e9 {
				t.Errorf("rate %d: after %ds drifted by %d ns", rate, k, got-(s.T0+int64(k)*1e9))
			}
		}
		if c := s.Count(int64(10e9)); c != rate*10 {
			t.Errorf("rate %d: Count(10s) = %d, want %d", rate, c, rate*10)
		}
	}
}

func TestScheduleLongRunNoOverflow(t *testing.T) {
	s := Schedule{Rate: 10_000_000}
	i := uint64(10_000_000) * 3600 * 24 // a day at 10M/s: i*1e9 overflows 64 bits
	if got, want := s.At(i), int64(3600*24)*1e9; got != want {
		t.Fatalf("At(%d) = %d, want %d", i, got, want)
	}
}

func TestPacerStridesAndCatchUp(t *testing.T) {
	s := Schedule{T0: 0, Rate: 1000} // one request per ms
	const workers = 3
	const limit = 1_000_000
	seen := make([]bool, limit)
	for w := uint64(0); w < workers; w++ {
		p := &Pacer{S: s, Offset: w, Stride: workers, Limit: limit, MaxBatch: 64}
		var buf []int64
		now := int64(0)
		total := 0
		for p.Remaining() > 0 {
			if now == 5e9 { // a 200 ms stall of the client: a backlog builds up
				now += 200e6
			}
			buf = p.Due(now, buf[:0])
			if len(buf) > p.MaxBatch {
				t.Fatalf("batch of %d exceeds %d", len(buf), p.MaxBatch)
			}
			for _, at := range buf {
				if at > now {
					t.Fatalf("request due at %d handed out early at %d", at, now)
				}
				i := uint64(at / 1e6)
				if at != s.At(i) || i%workers != w || seen[i] {
					t.Fatalf("worker %d got intended time %d (request %d) twice or out of its share", w, at, i)
				}
				seen[i] = true
			}
			total += len(buf)
			if len(buf) < p.MaxBatch {
				now += 1e6 // advance the clock by one interval only when caught up
			}
		}
		if want := (limit-int(w)-1)/workers + 1; total != want {
			t.Errorf("worker %d sent %d, want %d", w, total, want)
		}
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("request %d never sent", i)
		}
	}
}

// Idle connections are reused oldest first, so that at a low rate every
// connection still carries requests (as the study's 60k connections did).
func TestRingFIFO(t *testing.T) {
	r := ring{buf: make([]int32, 3)}
	for i := int32(0); i < 3; i++ {
		r.push(i)
	}
	var got []int32
	for k := 0; k < 7; k++ {
		i := r.pop()
		got = append(got, i)
		r.push(i)
	}
	want := []int32{0, 1, 2, 0, 1, 2, 0}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
