package loadgen

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
)

// Protocol is what a request and its response look like on the wire.
type Protocol int

const (
	// HTTP is HTTP/1.1 with Content-Length delimited responses.
	HTTP Protocol = iota
	// Raw is a fixed-size request answered by a fixed-size response.
	Raw
)

// HTTPRequest builds the GET request sent for target (a URL path with
// query) to host; close asks the server to close after answering.
func HTTPRequest(host, target string, close bool) []byte {
	if target == "" {
		target = "/"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: cnperf\r\n", target, host)
	if close {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// ParseURL splits an http:// URL into host:port and the request target.
func ParseURL(s string) (hostport, target string, err error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", fmt.Errorf("url %q: %w", s, err)
	}
	if u.Scheme != "http" {
		return "", "", fmt.Errorf("url %q: only http:// is supported (no TLS)", s)
	}
	hostport = u.Host
	if u.Port() == "" {
		hostport += ":80"
	}
	target = u.RequestURI()
	return hostport, target, nil
}

// respParser finds the end of each response in a byte stream without
// allocating: a Content-Length delimited HTTP/1.1 response, or a fixed
// number of raw bytes. It keeps the first bytes of the current header line
// to recognise the few headers that matter.
type respParser struct {
	http      bool
	inBody    bool
	first     bool // next header line is the status line
	status    int
	clen      int64
	remaining int64
	close     bool // the server said Connection: close
	chunked   bool
	line      [48]byte
	linelen   int
	lineOver  bool
}

func (p *respParser) reset(proto Protocol, rawSize int64) {
	*p = respParser{http: proto == HTTP, first: true, clen: -1}
	if !p.http {
		p.inBody = true
		p.remaining = rawSize
	}
}

// feed consumes b; it returns how many bytes it used and whether a whole
// response ended there. Header lines are found with bytes.IndexByte (a
// vector scan); a line is copied into p.line only when it is split across
// reads, so a whole response in one read is parsed in place.
func (p *respParser) feed(b []byte) (int, bool) {
	i := 0
	if !p.inBody {
		for i < len(b) {
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 { // the line goes on in the next read: keep its start
				p.keep(b[i:])
				return len(b), false
			}
			seg := b[i : i+j]
			i += j + 1
			line, over := seg, false
			if p.linelen > 0 || p.lineOver { // the end of a line begun in an earlier read
				p.keep(seg)
				line, over = p.line[:p.linelen], p.lineOver
			}
			p.linelen, p.lineOver = 0, false
			n := len(line)
			if n > 0 && line[n-1] == '\r' {
				n--
			}
			line = line[:n]
			if n == 0 && !over { // blank line: end of headers
				p.inBody = true
				if p.chunked || p.clen < 0 {
					p.remaining = -1 // unsupported framing: reported by done()
					return i, true
				}
				p.remaining = p.clen
				break
			}
			if p.first {
				p.first = false
				p.status = parseStatus(line)
				continue
			}
			switch {
			case hasPrefixFold(line, "content-length:"):
				p.clen = parseInt(line[len("content-length:"):])
			case hasPrefixFold(line, "connection:"):
				p.close = containsFold(line[len("connection:"):], "close")
			case hasPrefixFold(line, "transfer-encoding:"):
				p.chunked = true
			}
		}
		if !p.inBody {
			return i, false
		}
	}
	avail := int64(len(b) - i)
	if avail >= p.remaining {
		i += int(p.remaining)
		p.remaining = 0
		return i, true
	}
	p.remaining -= avail
	return len(b), false
}

// keep appends the start of a split header line to p.line (its first
// len(p.line) bytes are enough for the headers that matter).
func (p *respParser) keep(b []byte) {
	n := copy(p.line[p.linelen:], b)
	p.linelen += n
	if n < len(b) {
		p.lineOver = true
	}
}

// ok reports whether the finished response is a success.
func (p *respParser) ok() bool {
	if !p.http {
		return true
	}
	return p.remaining == 0 && p.status >= 200 && p.status < 300
}

func parseStatus(line []byte) int {
	// "HTTP/1.1 200 OK"
	sp := -1
	for j, c := range line {
		if c == ' ' {
			sp = j
			break
		}
	}
	if sp < 0 || sp+4 > len(line) {
		return 0
	}
	return int(parseInt(line[sp+1 : sp+4]))
}

func parseInt(b []byte) int64 {
	var v int64 = -1
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if v < 0 {
				v = 0
			}
			v = v*10 + int64(c-'0')
		case c == ' ' || c == '\t':
			if v >= 0 {
				return v
			}
		default:
			return v
		}
	}
	return v
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for j := 0; j < len(prefix); j++ {
		if lower(b[j]) != prefix[j] {
			return false
		}
	}
	return true
}

func containsFold(b []byte, s string) bool {
	for j := 0; j+len(s) <= len(b); j++ {
		if hasPrefixFold(b[j:], s) {
			return true
		}
	}
	return false
}
