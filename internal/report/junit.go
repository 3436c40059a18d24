package report

import (
	"encoding/xml"
	"fmt"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/stats"
)

// The JUnit XML that CI systems read (Jenkins, GitLab, GitHub actions):
// one testsuite, a testcase per cell and figure the gate judged, a failure
// for a regression (or an undecided change, unless allowed: then skipped).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the gate's verdicts to path; a noisy or busy machine
// is a test case of its own ("machine"), failed (or skipped) like an
// undecided change.
func writeJUnit(path string, rc *stats.RunComparison, judged []stats.Judgement, limit float64, allowUndecided bool) error {
	s := junitSuite{Name: fmt.Sprintf("cnperf compare --fail-on-regression %g", 100*limit),
		Properties: []junitProperty{{"old", rc.Old}, {"new", rc.New}, {"limit", fmt.Sprintf("%g %%", 100*limit)}}}
	undecided := func(c *junitCase, msg, text string) {
		f := &junitFailure{Message: msg, Type: stats.GateUndecided, Text: text}
		if allowUndecided {
			c.Skipped = f
			s.Skipped++
			return
		}
		c.Failure = f
		s.Failures++
	}
	for _, j := range judged {
		c := junitCase{Name: judgedName(j), Classname: "cnperf." + j.Cell.Placement + "." + j.Cell.Network, SystemOut: j.Verdict + ": " + j.Why}
		switch j.Verdict {
		case stats.GateRegression:
			c.Failure = &junitFailure{Message: "regression: " + j.Why, Type: stats.GateRegression, Text: j.Why}
			s.Failures++
		case stats.GateUndecided:
			undecided(&c, "undecided: "+j.Why, j.Why)
		}
		s.Cases = append(s.Cases, c)
	}
	if stats.Compared(judged) == 0 {
		why := NothingCompared(rc)
		s.Cases = append(s.Cases, junitCase{Name: "gate: nothing compared", Classname: "cnperf.gate",
			Failure: &junitFailure{Message: "nothing compared: " + why, Type: "nothing compared", Text: why}})
		s.Failures++
	}
	m := junitCase{Name: "machine: noise and load", Classname: "cnperf.machine", SystemOut: "no noisy- or busy-machine warning"}
	if w := rc.MachineWarnings(); len(w) > 0 {
		text := ""
		for _, x := range w {
			text += x + "\n"
		}
		m.SystemOut = ""
		undecided(&m, "undecided: a run warned of a noisy or busy machine", text)
	}
	s.Cases = append(s.Cases, m)
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: "cnperf", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suites: []junitSuite{s}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return cli.WriteBytes("--junit", path, append([]byte(xml.Header), append(b, '\n')...))
}
