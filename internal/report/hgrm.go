package report

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
)

// WriteHgrm writes every result's latency distributions as HdrHistogram
// .hgrm text into dir: NAME.hgrm for the main (corrected) latency,
// NAME.uncorrected.hgrm and NAME.send_lag.hgrm beside it for open-loop
// steps. It returns the files written. An existing file is replaced only
// if it is an .hgrm file, or with force (the output rule, package cli;
// HgrmNames lets a command check them before any work).
func WriteHgrm(dir string, run *result.Run, force bool) (files []string, err error) {
	undo, err := makeOutDir("--hgrm", dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			undo(files)
			files = nil
		}
	}()
	for _, f := range hgrmFiles(run) {
		h, err := hist.Decode(f.enc)
		if err != nil {
			return files, err
		}
		path := filepath.Join(dir, f.name)
		if err := cli.CheckReplace("--hgrm", path, HgrmKind, force); err != nil {
			return files, err
		}
		if err := cli.WriteFile("--hgrm", path, h.WriteHgrm); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

// HgrmNames are the files WriteHgrm writes for run.
func HgrmNames(run *result.Run) []string {
	var names []string
	for _, f := range hgrmFiles(run) {
		names = append(names, f.name)
	}
	return names
}

type hgrmFile struct{ name, enc string }

// hgrmFiles names every distribution of run's results, in a fixed order.
func hgrmFiles(run *result.Run) []hgrmFile {
	var out []hgrmFile
	used := map[string]int{}
	for _, r := range run.Results {
		if r.Histogram == "" {
			continue
		}
		base := fileSafe(strings.Join(nonEmpty(r.Network, r.Placement, r.Workload, r.Step), "_"))
		used[base]++
		if n := used[base]; n > 1 {
			base += fmt.Sprintf("_%d", n)
		}
		out = append(out, hgrmFile{base + ".hgrm", r.Histogram})
		for _, k := range slices.Sorted(maps.Keys(r.Metrics.Histograms)) {
			// a key from the file is no path
			out = append(out, hgrmFile{base + "." + fileSafe(k) + ".hgrm", r.Metrics.Histograms[k]})
		}
	}
	return out
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" && s != "-" {
			out = append(out, s)
		}
	}
	return out
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		case r == '%':
			return 'p'
		}
		return '_'
	}, s)
}

// makeOutDir makes an output folder (not its parents); undo, after a
// failed write, removes the files written and the folder, when this call
// made it (a folder that was there keeps what it holds).
func makeOutDir(flag, dir string) (undo func(written []string), err error) {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s %s: %v; choose a folder you can write", flag, dir, err)
	}
	if statErr == nil {
		return func([]string) {}, nil
	}
	return func(written []string) {
		for _, p := range written {
			os.Remove(p)
		}
		os.Remove(dir)
	}, nil
}
