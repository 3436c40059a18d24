package section

import (
	"io"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// The registry hands the sections back in rank order (then by name), each
// list only those with that part; a name given twice panics.
func TestRegistry(t *testing.T) {
	mu.Lock()
	saved := all
	all = map[string]Info{}
	mu.Unlock()
	defer func() { mu.Lock(); all = saved; mu.Unlock() }()

	text := func(io.Writer, *result.Run) {}
	page := func([]Input) HTMLSection { return HTMLSection{} }
	for _, i := range []Info{
		{Name: "c", Text: text, TextRank: 20, HTML: page, HTMLRank: 5},
		{Name: "a", Text: text, TextRank: 20},
		{Name: "b", HTML: page, HTMLRank: 1},
		{Name: "d", Text: text, TextRank: 10, HTML: page, HTMLRank: 5},
	} {
		Register(i)
	}
	names := func(is []Info) string {
		var s []string
		for _, i := range is {
			s = append(s, i.Name)
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct{ what, got, want string }{
		{"texts", names(Texts()), "d a c"},
		{"pages", names(HTMLs()), "b c d"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.what, tc.got, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a name registered twice did not panic")
		}
	}()
	Register(Info{Name: "a", Text: text})
}
