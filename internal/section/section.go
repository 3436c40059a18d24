// Package section is the report's registry of sections and the small kit
// a section needs: the chart and table types of the HTML page, the
// formatting of a figure, medians and their intervals. A section lives
// with the experiment whose results it reads (experiment/NAME/report.go)
// and registers itself in its init; report draws the registered sections
// in the table and on the page, in their rank order, and names none.
//
// It sits below both report and the experiments: an experiment may not
// import report (docs/architecture.md).
package section

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/cnperf/cnperf/internal/result"
)

// Info declares a section: what it writes under the text table and what
// it draws on the HTML page. Either may be nil. Each writes or returns
// nothing when the runs have no results it reads.
type Info struct {
	// Name names the section (a test lists what is registered by it).
	Name string
	// Text writes the section under the table of `cnperf run` and
	// `cnperf report`, starting with its own blank line.
	Text func(w io.Writer, run *result.Run)
	// HTML builds the section of the page from the runs given; the page
	// drops its empty charts and the section when nothing is left.
	HTML func(ins []Input) HTMLSection
	// TextRank and HTMLRank place the section among the others, lowest
	// first (those in use: services 10, replicas 20, sizes 30, density
	// 40, flows 50, neighbours 60, blocking 70, tuning 80 in the text;
	// comparison 10, sizes 20, spectrum 30, phases 40, services 50,
	// interference 60, alltoall 70, flows 80, studies 90, environment 100,
	// networks 110 on the page).
	TextRank, HTMLRank int
}

var (
	mu  sync.Mutex
	all = map[string]Info{}
)

// Register adds a section; a name registered twice is a programming
// error and panics.
func Register(i Info) {
	mu.Lock()
	defer mu.Unlock()
	if i.Name == "" {
		panic("section: Register with no name")
	}
	if _, dup := all[i.Name]; dup {
		panic(fmt.Sprintf("section: %q registered twice", i.Name))
	}
	all[i.Name] = i
}

// sorted returns the sections that have the part has says, by rank and
// then by name.
func sorted(has func(Info) bool, rank func(Info) int) []Info {
	mu.Lock()
	defer mu.Unlock()
	var out []Info
	for _, i := range all {
		if has(i) {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if ra, rb := rank(out[a]), rank(out[b]); ra != rb {
			return ra < rb
		}
		return out[a].Name < out[b].Name
	})
	return out
}

// Texts are the sections with a text part, in TextRank order.
func Texts() []Info {
	return sorted(func(i Info) bool { return i.Text != nil }, func(i Info) int { return i.TextRank })
}

// HTMLs are the sections with a part of the page, in HTMLRank order.
func HTMLs() []Info {
	return sorted(func(i Info) bool { return i.HTML != nil }, func(i Info) int { return i.HTMLRank })
}
