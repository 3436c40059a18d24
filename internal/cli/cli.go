// Package cli is cnperf's one command line: every command and sub-command
// is a Command in one tree, parsed the same way (flags before, between or
// after the positional arguments, -flag or --flag, -- ends the flags),
// answering -h, --help and help with its usage, summary and flags, and
// failing with one line and exit status 2 on bad usage (package exitcode).
// The tree also gives `cnperf help` and the shell completion scripts.
//
// A command's Run registers its flags on c.Flags(), then calls c.Parse()
// before it does anything: that is where -h is answered, bad usage is
// refused, and where Describe stops it to read its flags.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/registry"
)

// Command is one command of the tree: a leaf has Run, a group has Subs.
type Command struct {
	Name    string
	Args    string // the positional arguments, for the usage line ("FILE...", "[FILE]"); "" takes none
	Summary string // one line
	Long    string // printed after the flags by -h: examples, notes
	Run     func(c *Ctx) error
	Subs    []*Command
	// Raw: the arguments go to Run as they are (cluster kubectl); -h and
	// --help as the first are still the command's own help.
	Raw bool

	parent *Command
}

// Path is the command's full name, "cnperf cluster up".
func (cmd *Command) Path() string {
	if cmd.parent == nil {
		return cmd.Name
	}
	return cmd.parent.Path() + " " + cmd.Name
}

// Sub finds a sub-command by name.
func (cmd *Command) Sub(name string) *Command {
	for _, s := range cmd.Subs {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// link sets every command's parent.
func (cmd *Command) link() {
	for _, s := range cmd.Subs {
		s.parent = cmd
		s.link()
	}
}

// Walk calls f on the command and every command below it.
func (cmd *Command) Walk(f func(*Command)) {
	cmd.link()
	f(cmd)
	for _, s := range cmd.Subs {
		s.Walk(f)
	}
}

// Ctx is a command's invocation: its flags and arguments.
type Ctx struct {
	cmd      *Command
	fs       *flag.FlagSet
	args     []string
	out      io.Writer // where -h is printed
	describe bool      // stop at Parse: only the flags are wanted
}

// errDescribed stops a command at Parse when only its flags are wanted.
var errDescribed = errors.New("described")

// Flags is the command's flag set, to register its flags on.
func (c *Ctx) Flags() *flag.FlagSet { return c.fs }

// Command is the command being run.
func (c *Ctx) Command() *Command { return c.cmd }

// Args is the command line after the command's name, as given: flags and
// positional arguments (`cnperf run -f FILE FLAGS...` applies FLAGS to
// every scenario of FILE by parsing them again).
func (c *Ctx) Args() []string { return c.args }

// Parse parses the flags and returns the positional arguments. A command
// whose Args is "" takes none. -h or --help prints the help and returns
// flag.ErrHelp; bad usage is one line, with exit status 2.
func (c *Ctx) Parse() ([]string, error) {
	if c.describe {
		return nil, errDescribed
	}
	if c.cmd.Raw {
		if len(c.args) > 0 && isHelp(c.args[0]) {
			Help(c.out, c.cmd, c.fs)
			return nil, flag.ErrHelp
		}
		return c.args, nil
	}
	if c.cmd.Args == "" && len(c.args) == 1 && c.args[0] == "help" {
		Help(c.out, c.cmd, c.fs)
		return nil, flag.ErrHelp
	}
	pos, err := Parse(c.fs, c.args, c.cmd.Path())
	if errors.Is(err, flag.ErrHelp) {
		Help(c.out, c.cmd, c.fs)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if c.cmd.Args == "" && len(pos) > 0 {
		return nil, Usagef("unexpected argument %q: %s takes flags only (they start with --); see `%s --help`", pos[0], c.cmd.Path(), c.cmd.Path())
	}
	return pos, nil
}

// Usage marks err as bad usage (exit status 2); nil stays nil.
func Usage(err error) error { return exitcode.With(err, exitcode.Usage) }

// Usagef is a bad-usage error (exit status 2).
func Usagef(format string, a ...any) error { return Usage(fmt.Errorf(format, a...)) }

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// Execute runs the command args name under root (root's own name not
// among them). -h, --help and help print the help and return
// flag.ErrHelp; out is where help goes.
func Execute(root *Command, args []string, out io.Writer) error {
	root.link()
	cmd := root
	for len(cmd.Subs) > 0 {
		if len(args) == 0 {
			return Usagef("name a command: %s; see `%s --help`", names(cmd), cmd.Path())
		}
		a := args[0]
		if isHelp(a) || a == "help" {
			if a == "help" && len(args) > 1 { // help COMMAND...: that command's help
				return Execute(cmd, append(slices.Clone(args[1:]), "--help"), out)
			}
			Help(out, cmd, nil)
			return flag.ErrHelp
		}
		sub := cmd.Sub(a)
		if sub == nil {
			what := strings.TrimPrefix(cmd.Path()+" command", root.Name+" ")
			if cmd == root {
				what = "command"
			}
			if strings.HasPrefix(a, "-") {
				return Usagef("unknown flag %s; %s takes a command first: %s; see `%s --help`", a, cmd.Path(), names(cmd), cmd.Path())
			}
			return Usagef("unknown %s %q;%s use one of %s", what, a, registry.Suggest(a, subNames(cmd)), names(cmd))
		}
		cmd, args = sub, args[1:]
	}
	c := &Ctx{cmd: cmd, fs: NewFlagSet(cmd.Path()), args: args, out: out}
	return cmd.Run(c)
}

// Describe returns the flags a leaf command registers, without running it.
func Describe(cmd *Command) *flag.FlagSet {
	fs := NewFlagSet(cmd.Path())
	if cmd.Run != nil {
		_ = cmd.Run(&Ctx{cmd: cmd, fs: fs, out: io.Discard, describe: true})
	}
	return fs
}

// NewFlagSet is an empty flag set whose errors come back to the caller.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func subNames(cmd *Command) []string {
	var n []string
	for _, s := range cmd.Subs {
		n = append(n, s.Name)
	}
	return n
}

func names(cmd *Command) string { return strings.Join(subNames(cmd), ", ") }

// Help writes a command's usage line, summary, flags (as --flag, with
// their type and default) or sub-commands, and its notes. fs is the
// command's flag set (nil: Describe finds it).
func Help(w io.Writer, cmd *Command, fs *flag.FlagSet) {
	cmd.link()
	var b strings.Builder
	use := cmd.Path()
	switch {
	case len(cmd.Subs) > 0:
		use += " COMMAND [flags] [arguments]"
	case cmd.Raw:
		use += " " + cmd.Args
	case cmd.Args != "":
		use += " " + cmd.Args + " [flags]"
	default:
		use += " [flags]"
	}
	fmt.Fprintf(&b, "usage: %s\n\n%s\n", use, cmd.Summary)
	if len(cmd.Subs) > 0 {
		b.WriteString("\ncommands:\n")
		width := 0
		for _, s := range cmd.Subs {
			width = max(width, len(s.Name))
		}
		for _, s := range cmd.Subs {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, s.Name, s.Summary)
		}
		fmt.Fprintf(&b, "\n`%s COMMAND --help` shows a command's flags.\n", cmd.Path())
	} else {
		if fs == nil {
			fs = Describe(cmd)
		}
		writeFlags(&b, fs)
	}
	if cmd.Long != "" {
		b.WriteString("\n" + strings.TrimRight(cmd.Long, "\n") + "\n")
	}
	io.WriteString(w, b.String())
}

// writeFlags lists the flags, sorted, as --name TYPE, the help indented
// below with the default.
func writeFlags(b *strings.Builder, fs *flag.FlagSet) {
	var fl []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { fl = append(fl, f) })
	if len(fl) == 0 {
		b.WriteString("\nflags: none (--help prints this)\n")
		return
	}
	b.WriteString("\nflags:\n")
	for _, f := range fl {
		hint, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if hint != "" {
			line += " " + hint
		}
		if !isZero(f) {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(b, "%s\n      %s\n", line, strings.ReplaceAll(usage, "\n", "\n      "))
	}
}

// Main runs the command line under root and returns the exit status: 0,
// or the status the error carries (2 for bad usage), else 1; the error is
// one line on errw, after the command's path.
func Main(root *Command, args []string, out, errw io.Writer) int {
	err := Execute(root, args, out)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	path := root.Path()
	cmd := root
	for _, a := range args {
		s := cmd.Sub(a)
		if s == nil {
			break
		}
		cmd, path = s, s.Path()
	}
	msg := strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(err.Error())
	fmt.Fprintln(errw, path+": "+msg)
	var ec exitcode.Code
	if errors.As(err, &ec) {
		return int(ec)
	}
	return 1
}

// Leaves lists every leaf command under root.
func Leaves(root *Command) []*Command {
	var out []*Command
	root.Walk(func(c *Command) {
		if len(c.Subs) == 0 {
			out = append(out, c)
		}
	})
	return out
}

// Find is the command at path under root, or nil.
func Find(root *Command, path ...string) *Command {
	root.link()
	cmd := root
	for _, p := range path {
		if cmd = cmd.Sub(p); cmd == nil {
			return nil
		}
	}
	return cmd
}
