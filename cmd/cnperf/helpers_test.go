package main

import (
	"io"
	"os"

	"github.com/cnperf/cnperf/internal/cli"
)

// call runs `cnperf name args...` in this process, as main does, and
// returns its error.
func call(name string, args []string) error { return dispatch(append([]string{name}, args...)...) }

// invoke runs f as the command name of the tree, with args: its flags and
// help are parsed as that command's, help written on out.
func invoke(name string, args []string, out io.Writer, f func(*cli.Ctx) error) error {
	cmd := *cli.Find(root, name)
	cmd.Run = f
	return cli.Execute(&cli.Command{Name: "cnperf", Subs: []*cli.Command{&cmd}}, append([]string{name}, args...), out)
}

// parseRunArgs is parseRun given `cnperf run`'s arguments.
func parseRunArgs(args []string) (s *runSetup, err error) {
	err = invoke("run", args, os.Stdout, func(c *cli.Ctx) error {
		s, err = parseRun(c)
		return err
	})
	return s, err
}

// compareArgs is compareMain given `cnperf compare`'s arguments.
func compareArgs(args []string, stdout io.Writer) error {
	return invoke("compare", args, stdout, func(c *cli.Ctx) error { return compareMain(c, stdout) })
}
