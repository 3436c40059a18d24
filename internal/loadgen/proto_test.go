package loadgen

import (
	"strings"
	"testing"
)

// TestParserAnySplit feeds each response whole and split at every byte
// boundary (and byte by byte): the parser must find the same end, status,
// framing and Connection: close whatever the reads look like.
func TestParserAnySplit(t *testing.T) {
	long := "X-Pad: " + strings.Repeat("p", 120) + "\r\n"
	cases := []struct {
		name   string
		resp   string
		extra  string // bytes after the response (the next one's)
		ok     bool
		status int
		close  bool
	}{
		{"ok", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "", true, 200, false},
		{"lf only", "HTTP/1.1 200 OK\nContent-Length: 3\n\nabc", "", true, 200, false},
		{"long header line", "HTTP/1.1 200 OK\r\n" + long + "content-length: 4\r\n" + long + "\r\nbody", "", true, 200, false},
		{"long line before blank", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n" + long + "\r\n", "", true, 204, false},
		{"close", "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nok", "", true, 200, true},
		{"keep-alive", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", "", true, 200, false},
		{"404", "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found", "", false, 404, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n", false, 200, false},
		{"followed by the next", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", "HTTP/1.1 200 OK\r\n", true, 200, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wire := []byte(c.resp + c.extra)
			var splits [][]int
			splits = append(splits, nil) // whole
			for k := 1; k < len(wire); k++ {
				splits = append(splits, []int{k})
			}
			every := make([]int, 0, len(wire))
			for k := 1; k < len(wire); k++ {
				every = append(every, k)
			}
			splits = append(splits, every)
			for _, cut := range splits {
				var p respParser
				p.reset(HTTP, 0)
				used, end, prev := 0, false, 0
				for _, k := range append(cut, len(wire)) {
					n, e := p.feed(wire[prev:k])
					used += n
					prev = k
					if e {
						end = true
						break
					}
				}
				if !end {
					t.Fatalf("cuts %v: no end of response", cut)
				}
				if c.ok && used != len(c.resp) {
					t.Fatalf("cuts %v: used %d bytes, want %d", cut, used, len(c.resp))
				}
				if p.ok() != c.ok || p.status != c.status || p.close != c.close {
					t.Fatalf("cuts %v: ok %v status %d close %v, want %v %d %v", cut, p.ok(), p.status, p.close, c.ok, c.status, c.close)
				}
			}
		})
	}
}
