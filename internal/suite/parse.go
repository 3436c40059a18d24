package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/registry"
)

// Keys are the keys of a suite written out (a scenario's suite: block),
// besides the experiments' and workloads' options; a quick: block takes
// them but summary, source and quick.
var Keys = []string{"summary", "source", "cases", "workloads", "duration", "repeat", "message-size", "lb", "services", "quick"}

// ParseFile reads a built-in suite's file: one YAML document, a scenario
// with a name and its suite written out (`name: sizes`, `suite: {...}`).
func ParseFile(file string, b []byte, isOption func(string) bool) (Suite, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return Suite{}, fmt.Errorf("%s: %v", file, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return Suite{}, fmt.Errorf("%s: a suite file holds one scenario", file)
	}
	if len(doc.Content) == 0 {
		return Suite{}, fmt.Errorf("%s: empty; a suite file holds name: and suite:", file)
	}
	m := doc.Content[0]
	var name string
	var body *yaml.Node
	for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
		switch k, v := m.Content[i], m.Content[i+1]; k.Value {
		case "name":
			name = v.Value
		case "suite":
			body = v
		default:
			return Suite{}, fmt.Errorf("%s:%d: a suite file has name and suite only, not %q", file, k.Line, k.Value)
		}
	}
	if body == nil {
		return Suite{}, fmt.Errorf("%s: no suite: block", file)
	}
	s, err := Parse(file, fmt.Sprintf("scenario %q", name), body, isOption)
	s.Name = name
	return s, err
}

// Parse reads a suite written out, the YAML mapping node n: its summary,
// source, cases ({network, placement} each), workloads, duration, repeat
// (its rounds), message-size, lb, services, the experiments' and
// workloads' options by flag name, and a quick: block of what --quick
// changes. Errors read FILE:LINE: ..., where naming the scenario.
// isOption says which other keys are options; nil takes any.
func Parse(file, where string, n *yaml.Node, isOption func(string) bool) (Suite, error) {
	p := parser{file: file, where: where, isOption: isOption}
	var s Suite
	err := p.block(n, &s, true)
	return s, err
}

type parser struct {
	file, where string
	isOption    func(string) bool
}

func (p parser) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, n.Line, fmt.Sprintf(format, args...))
}

func (p parser) block(n *yaml.Node, s *Suite, top bool) error {
	what := "the suite of " + p.where
	if !top {
		what = "the quick: block of " + p.where
	}
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s is not a mapping of keys to values; write it as `cnperf suites --show default` does", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if seen[key] {
			return p.errf(k, "key %q twice in %s; give it once", key, what)
		}
		seen[key] = true
		var err error
		switch key {
		case "summary", "source", "quick":
			if !top {
				return p.errf(k, "a quick: block has no %s; drop it", key)
			}
			switch key {
			case "summary":
				s.Summary, err = p.text(k, v)
			case "source":
				s.Source, err = p.text(k, v)
			default:
				s.Short = &Suite{}
				err = p.block(v, s.Short, false)
			}
		case "cases":
			s.Cases, err = p.cases(k, v)
		case "workloads", "lb":
			var t string
			if t, err = p.text(k, v); err == nil && key == "workloads" {
				s.Workloads = splitList(t)
			} else if err == nil {
				s.LBs = splitList(t)
			}
		case "duration":
			s.Params.Duration, err = p.duration(k, v)
		case "repeat":
			s.Rounds, err = p.positive(k, v)
		case "services":
			s.Services, err = p.ints(k, v)
		case "message-size":
			var sizes []int
			if sizes, err = p.ints(k, v); err == nil && len(sizes) == 1 {
				s.Params.MessageSize = sizes[0]
			} else if err == nil {
				s.setOption(key, joinInts(sizes))
			}
		default:
			if p.isOption != nil && !p.isOption(key) {
				hint := ""
				if c := registry.Closest(key, Keys); c != "" {
					hint = fmt.Sprintf("; did you mean %q?", c)
				}
				return p.errf(k, "unknown key %q in %s%s; a suite takes %s and the experiments' and workloads' options (see cnperf run -h)", key, what, hint, strings.Join(Keys, ", "))
			}
			var t string
			if t, err = p.text(k, v); err == nil {
				s.setOption(key, t)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Suite) setOption(k, v string) {
	if s.Options == nil {
		s.Options = map[string]string{}
	}
	s.Options[k] = v
}

// Text is the text of a flag's value in YAML: a scalar, or a list of
// scalars joined with commas; ok false for anything else (a mapping, a
// nested list, nothing).
func Text(v *yaml.Node) (string, bool) {
	switch v.Kind {
	case yaml.ScalarNode:
		return v.Value, v.Tag != "!!null"
	case yaml.SequenceNode:
		var items []string
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
				return "", false
			}
			items = append(items, c.Value)
		}
		return strings.Join(items, ","), len(items) > 0
	}
	return "", false
}

func (p parser) text(k, v *yaml.Node) (string, error) {
	t, ok := Text(v)
	if !ok {
		return "", p.errf(v, "key %q in %s wants a value or a list of values; give e.g. %s: a,b", k.Value, p.where, k.Value)
	}
	return t, nil
}

func (p parser) ints(k, v *yaml.Node) ([]int, error) {
	t, err := p.text(k, v)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range splitList(t) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, p.errf(v, "key %q in %s: %q is not a positive whole number; give e.g. %s: [1, 100]", k.Value, p.where, f, k.Value)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, p.errf(v, "key %q in %s names nothing; give a number or drop it", k.Value, p.where)
	}
	return out, nil
}

func (p parser) positive(k, v *yaml.Node) (int, error) {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || n <= 0 {
		return 0, p.errf(v, "key %q in %s wants a positive whole number, e.g. %s: 3", k.Value, p.where, k.Value)
	}
	return n, nil
}

func (p parser) duration(k, v *yaml.Node) (time.Duration, error) {
	d, err := time.ParseDuration(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || d <= 0 {
		return 0, p.errf(v, "key %q in %s wants a positive duration, e.g. %s: 5s", k.Value, p.where, k.Value)
	}
	return d, nil
}

// cases reads a list of {network: NAME, placement: same-pod|same-host|cross-host}.
func (p parser) cases(k, v *yaml.Node) ([]experiment.Case, error) {
	bad := func(n *yaml.Node) error {
		return p.errf(n, "each of %s's cases is {network: NAME, placement: same-pod, same-host or cross-host}; write e.g. - {network: vxlan, placement: cross-host}", p.where)
	}
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return nil, bad(v)
	}
	var out []experiment.Case
	for _, c := range v.Content {
		if c.Kind != yaml.MappingNode || len(c.Content) != 4 {
			return nil, bad(c)
		}
		var cs experiment.Case
		for i := 0; i < 4; i += 2 {
			key, val := c.Content[i], c.Content[i+1]
			if val.Kind != yaml.ScalarNode || val.Value == "" {
				return nil, bad(val)
			}
			switch key.Value {
			case "network":
				cs.Network = val.Value
			case "placement":
				pl, err := ground.ParsePlacement(val.Value)
				if err != nil {
					return nil, p.errf(val, "%v (in %s's cases)", err, p.where)
				}
				cs.Placement = pl
			default:
				return nil, bad(key)
			}
		}
		if cs.Network == "" || cs.Placement == "" {
			return nil, bad(c)
		}
		out = append(out, cs)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
