// Package loadgen is cnperf's load engine: an open-loop (constant-rate)
// engine that measures latency from each request's intended send time, so
// that a stalled server cannot hide its stall (coordinated omission), and a
// closed-loop engine in the style of wrk. Both drive many non-blocking
// connections from a few worker threads, each with its own epoll set and
// its own histograms, merged exactly at the end. Requests are HTTP/1.1 or
// fixed-size raw TCP messages.
package loadgen

import "math/bits"

// Schedule is a constant-rate send plan: request i is due at
// T0 + i*1e9/Rate nanoseconds, computed from the fixed start each time
// (never by adding intervals), in exact integer arithmetic, so that no
// rounding error accumulates however long the run.
type Schedule struct {
	T0   int64  // ns on the engine's clock
	Rate uint64 // requests per second, > 0
}

// At is the intended send time of request i.
func (s Schedule) At(i uint64) int64 {
	hi, lo := bits.Mul64(i, 1e9)
	if hi >= s.Rate { // would overflow: more than 2^64 ns away; never in a bounded run
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, s.Rate)
	return s.T0 + int64(q)
}

// Count is how many requests are due in a window of d nanoseconds.
func (s Schedule) Count(d int64) uint64 {
	hi, lo := bits.Mul64(uint64(d), s.Rate)
	q, _ := bits.Div64(hi, lo, 1e9)
	return q
}

// Pacer walks one worker's share of a schedule: requests Offset,
// Offset+Stride, ... below Limit. A worker asks it which requests are due
// at a given time; after a stall it hands out the backlog in batches of at
// most MaxBatch, oldest first, each keeping its intended time.
type Pacer struct {
	S        Schedule
	Offset   uint64
	Stride   uint64
	Limit    uint64 // requests at or above Limit are outside the window
	MaxBatch int

	next uint64 // next request index, Offset + k*Stride
	init bool
}

func (p *Pacer) start() {
	if !p.init {
		p.next = p.Offset
		if p.Stride == 0 {
			p.Stride = 1
		}
		p.init = true
	}
}

// Next returns the index and intended time of the next request not yet
// handed out, and false when the window is exhausted.
func (p *Pacer) Next() (uint64, int64, bool) {
	p.start()
	if p.next >= p.Limit {
		return 0, 0, false
	}
	return p.next, p.S.At(p.next), true
}

// Take marks the request returned by Next as handed out.
func (p *Pacer) Take() {
	p.start()
	p.next += p.Stride
}

// Due appends to dst the intended times of the requests due at now, at
// most MaxBatch of them (all if MaxBatch is 0), and marks them handed out.
func (p *Pacer) Due(now int64, dst []int64) []int64 {
	for n := 0; p.MaxBatch == 0 || n < p.MaxBatch; n++ {
		_, at, ok := p.Next()
		if !ok || at > now {
			break
		}
		dst = append(dst, at)
		p.Take()
	}
	return dst
}

// Remaining is how many requests of this pacer are not yet handed out.
func (p *Pacer) Remaining() uint64 {
	p.start()
	if p.next >= p.Limit {
		return 0
	}
	return (p.Limit-p.next-1)/p.Stride + 1
}
