package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/httpserver"
)

// BenchmarkHotPath is the user-space work of one open-loop request: its
// intended time, parsing a 350 B response split over two reads, and three
// histogram records. go test -bench HotPath -benchmem: 0 allocs/op.
func BenchmarkHotPath(b *testing.B) {
	resp, err := httpserver.Response(350, false)
	if err != nil {
		b.Fatal(err)
	}
	s := Schedule{T0: 1, Rate: 50000}
	lat, unc, lag := hist.New(), hist.New(), hist.New()
	var p respParser
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		at := s.At(uint64(i))
		p.reset(HTTP, 0)
		if _, end := p.feed(resp[:100]); end {
			b.Fatal("ended early")
		}
		if n, end := p.feed(resp[100:]); !end || n != 250 || !p.ok() {
			b.Fatal("response not recognised")
		}
		lag.Record(time.Duration(at % 1000))
		lat.Record(time.Duration(at%100000 + 1000))
		unc.Record(time.Duration(at%100000 + 900))
	}
}

// BenchmarkClosedLoopLoopback runs the whole engine (epoll, read, write,
// parse, record) against the built-in server on loopback; ns/op is wall
// time per request with one connection, allocs/op includes the setup of
// each 100 ms run, amortised.
func BenchmarkClosedLoopLoopback(b *testing.B) {
	addr := startHTTP(b, 350)
	b.ReportAllocs()
	b.ResetTimer()
	done := 0
	for done < b.N {
		c := httpConfig(addr)
		c.Duration, c.Connections, c.Threads = 100*time.Millisecond, 1, 1
		r, err := Run(context.Background(), c)
		if err != nil {
			b.Fatal(err)
		}
		done += int(r.Completed)
	}
}
