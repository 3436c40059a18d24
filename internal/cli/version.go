package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// WriteVersion writes what the binary is: the version (set with -ldflags
// "-X main.version=..."), the module's version, the commit it was built
// from, when, and whether the tree had changes, the Go version and the
// build settings that change what runs.
func WriteVersion(w io.Writer, name, version string) {
	fmt.Fprintf(w, "%s %s\n", name, version)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintf(w, "go: %s %s/%s (no build information in the binary)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return
	}
	fmt.Fprintf(w, "module: %s %s\n", bi.Main.Path, bi.Main.Version)
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if rev := set["vcs.revision"]; rev != "" {
		line := "commit: " + rev
		if t := set["vcs.time"]; t != "" {
			line += " (" + t + ")"
		}
		if set["vcs.modified"] == "true" {
			line += ", modified (uncommitted changes)"
		}
		fmt.Fprintln(w, line)
	} else {
		fmt.Fprintln(w, "commit: unknown (no VCS stamp: built with -buildvcs=false, outside a git checkout, or in a git worktree)")
	}
	fmt.Fprintf(w, "go: %s %s/%s\n", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	var build []string
	for _, k := range []string{"CGO_ENABLED", "GOAMD64", "GOARM64", "-tags", "-trimpath", "-race", "-ldflags", "-gcflags"} {
		if v, ok := set[k]; ok {
			if strings.ContainsAny(v, " \t") {
				v = fmt.Sprintf("%q", v)
			}
			build = append(build, k+"="+v)
		}
	}
	if len(build) > 0 {
		fmt.Fprintln(w, "build: "+strings.Join(build, " "))
	}
}
