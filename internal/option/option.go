// Package option is how a pluggable part (a network mode, a load balancer,
// a workload) declares the options it takes: name, type, default and help.
// A set of key=value options is checked against the declaration before
// anything is built, so a mistyped or malformed key is an error that lists
// the valid ones, never silently ignored.
package option

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind is an option's value type.
type Kind string

// The kinds.
const (
	String   Kind = "string"
	Bool     Kind = "bool"
	Int      Kind = "int"
	Float    Kind = "float"
	Duration Kind = "duration"
	Enum     Kind = "enum" // one of Values
	List     Kind = "list" // comma-separated strings
	Ints     Kind = "ints" // comma-separated positive whole numbers
)

// Spec declares one option.
type Spec struct {
	Name    string
	Kind    Kind
	Default string   // as text; "" when there is none
	Help    string   // one line
	Values  []string // the allowed values of an Enum
	// Example is a good value, for the error that refuses a bad one
	// ("--pods 2,4,8").
	Example string
	// AppliesTo says what takes the option, for the error when it is set
	// but nothing selected takes it ("the alltoall workload").
	AppliesTo string
	// Alone: when set, every part of the run must take it (a run whose
	// other parts would ignore it is refused, not half applied).
	Alone bool
}

// Check validates one value against the spec.
func (s Spec) Check(v string) error {
	bad := func(want string) error {
		return fmt.Errorf("option %s=%q: want %s", s.Name, v, want)
	}
	switch s.Kind {
	case Bool:
		if _, err := strconv.ParseBool(v); err != nil {
			return bad("true or false")
		}
	case Int:
		if _, err := strconv.Atoi(v); err != nil {
			return bad("a whole number")
		}
	case Float:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return bad("a number")
		}
	case Duration:
		if _, err := time.ParseDuration(v); err != nil {
			return bad("a duration such as 5s or 200ms")
		}
	case Ints:
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err != nil || n <= 0 {
				return bad("positive whole numbers, comma-separated")
			}
		}
	case Enum:
		for _, ok := range s.Values {
			if v == ok {
				return nil
			}
		}
		return bad("one of " + strings.Join(s.Values, ", "))
	}
	return nil
}

// Validate checks every key of set against specs: an unknown key or a
// malformed value is an error naming owner (e.g. "network vxlan") and the
// options it does take.
func Validate(owner string, specs []Spec, set map[string]string) error {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, ok := Find(specs, k)
		if !ok {
			if len(specs) == 0 {
				return fmt.Errorf("%s takes no option %q (it has no options)", owner, k)
			}
			return fmt.Errorf("%s has no option %q; its options are %s", owner, k, Names(specs))
		}
		if err := s.Check(set[k]); err != nil {
			return fmt.Errorf("%s: %w", owner, err)
		}
	}
	return nil
}

// Find looks an option up by name.
func Find(specs []Spec, name string) (Spec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names lists the option names, comma-separated.
func Names(specs []Spec) string {
	n := make([]string, len(specs))
	for i, s := range specs {
		n[i] = s.Name
	}
	return strings.Join(n, ", ")
}

// Get returns the value of name in set, or its declared default.
func Get(specs []Spec, set map[string]string, name string) string {
	if v, ok := set[name]; ok {
		return v
	}
	s, _ := Find(specs, name)
	return s.Default
}

// Describe writes one line per option, indented, for `-v` listings.
func Describe(w io.Writer, indent string, specs []Spec) {
	for _, s := range specs {
		typ := string(s.Kind)
		if s.Kind == Enum {
			typ = strings.Join(s.Values, "|")
		}
		line := fmt.Sprintf("%s%s=%s  %s", indent, s.Name, typ, s.Help)
		if s.Default != "" {
			line += " (default " + s.Default + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// optBool is a workload switch: unset (""), or "true"/"false" once given,
// so that --max-rate-search alone works and an absent flag stays absent.
type optBool struct{ s *string }

func (b optBool) String() string {
	if b.s == nil {
		return ""
	}
	return *b.s
}

func (b optBool) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	*b.s = strconv.FormatBool(x)
	return nil
}

func (b optBool) IsBoolFlag() bool { return true }

// FlagVar registers an option as a flag of fs and returns where its text
// lands: a string flag, or for a switch (isBool) a flag that is "" until
// given, then "true" or "false", so that --max-rate-search alone works and
// an absent switch stays absent.
func FlagVar(fs *flag.FlagSet, name, usage string, isBool bool) *string {
	if !isBool {
		return fs.String(name, "", usage)
	}
	s := new(string)
	fs.Var(optBool{s}, name, usage)
	return s
}

// Given are the values of the flags of fs the user set, among flags (as
// FlagVar or fs.String returned them), by name; with flags nil, of every
// flag set, as text.
func Given(fs *flag.FlagSet, flags map[string]*string) map[string]string {
	out := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if flags == nil {
			out[f.Name] = f.Value.String()
		} else if v, ok := flags[f.Name]; ok {
			out[f.Name] = *v
		}
	})
	return out
}

// KeyValues registers flag name of fs taking key=value options, repeatable
// or comma-separated (--mode-opt controlplane=off,encrypt=aes-gcm), and
// returns the map they land in. The flag's value is a KeyValueFlag: its
// text is the pairs, sorted (what a scenario file or a dump shows).
func KeyValues(fs *flag.FlagSet, name, usage string) map[string]string {
	m := map[string]string{}
	fs.Var(keyValues(m), name, usage)
	return m
}

// KeyValueFlag is the value of a flag that takes key=value pairs.
type KeyValueFlag interface {
	flag.Value
	Pairs() map[string]string
}

type keyValues map[string]string

func (m keyValues) Pairs() map[string]string { return m }

func (m keyValues) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ",")
}

func (m keyValues) Set(s string) error {
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("mode option %q; use key=value", kv)
		}
		m[k] = v
	}
	return nil
}
