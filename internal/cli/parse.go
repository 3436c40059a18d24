package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/registry"
)

// Parse sets the flags of fs found in args, wherever they are, and returns
// the other arguments in order. A flag is -name or --name, its value the
// next argument or after = (a switch takes only =false); -- ends the
// flags; - alone is an argument. -h and --help return flag.ErrHelp. path
// names the command in errors ("cnperf run"); every error is bad usage.
func Parse(fs *flag.FlagSet, args []string, path string) ([]string, error) {
	pos, err := parse(fs, args, path)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		// what the user typed is echoed: keep it on one line
		return nil, Usage(errors.New(oneLine.Replace(err.Error())))
	}
	return pos, err
}

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)

func parse(fs *flag.FlagSet, args []string, path string) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimPrefix(a[1:], "-")
		name, val, hasVal := strings.Cut(name, "=")
		if name == "" || name[0] == '-' || name[0] == '=' {
			return nil, Usagef("bad flag syntax %q: write --name or --name=value; see `%s --help`", a, path)
		}
		f := fs.Lookup(name)
		if f == nil {
			if isHelp("-" + name) {
				return nil, flag.ErrHelp
			}
			var known []string
			fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
			return nil, Usagef("unknown flag --%s;%s see `%s --help` for the flags", name, dashed(registry.Suggest(name, known)), path)
		}
		switch {
		case isSwitch(f) && !hasVal:
			val = "true"
		case !hasVal:
			if i+1 >= len(args) {
				hint, _ := flag.UnquoteUsage(f)
				return nil, Usagef("--%s needs a value (%s); see `%s --help`", name, hint, path)
			}
			i++
			val = args[i]
		}
		// a value is echoed in messages (one line each) and no flag takes
		// several lines
		if strings.ContainsAny(val, "\n\r") {
			return nil, Usagef("--%s %q: a value is one line; remove its line breaks", name, val)
		}
		if err := fs.Set(name, val); err != nil {
			return nil, Usage(valueError(f, val, err, path))
		}
	}
	return pos, nil
}

// dashed writes a suggested flag name with its dashes.
func dashed(s string) string { return strings.Replace(s, `mean "`, `mean "--`, 1) }

func isSwitch(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// valueError says what the flag wants: a duration with its unit, a whole
// number, true or false; or the flag's own reason.
func valueError(f *flag.Flag, val string, err error, path string) error {
	if g, ok := f.Value.(flag.Getter); ok {
		want := ""
		switch g.Get().(type) {
		case time.Duration:
			if _, nerr := fmt.Sscanf(val, "%g", new(float64)); nerr == nil && strings.Trim(val, "0123456789.+-eE") == "" {
				return fmt.Errorf("--%s %s: a duration needs its unit: write %ss (or ms, m, h)", f.Name, val, val)
			}
			want = "a duration such as 5s, 200ms or 1m30s"
		case bool:
			want = "true or false (a switch alone means true)"
		case int, int64, uint, uint64:
			want = "a whole number"
		case float64:
			want = "a number"
		}
		if want != "" {
			return fmt.Errorf("--%s %q: want %s; see `%s --help`", f.Name, val, want, path)
		}
	}
	return fmt.Errorf("--%s %q: %v", f.Name, val, err)
}

// isZero says a flag's default is its type's zero (not worth printing).
func isZero(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}
