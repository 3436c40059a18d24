package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
)

// ShowOptions are `cnperf report`'s: --hgrm, --ratio, --html, --csv and
// --pool.
type ShowOptions struct {
	Hgrm, Ratio, HTML, CSV string
	Pool                   bool
}

// Show reads results files and writes what `cnperf report` shows on w:
// each run's table (or, with Ratio, two workloads compared), and the
// files asked for.
func Show(w io.Writer, paths []string, o ShowOptions) error {
	if o.HTML != "" {
		if err := CheckOutFile("--html", o.HTML); err != nil {
			return err
		}
	}
	ins, err := ReadRuns(paths)
	if err != nil {
		return err
	}
	if o.Pool {
		run, lines, err := Pool(ins)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "pooled %d files (each file's rounds follow the previous file's; cells are paired by round within each file only):\n", len(ins))
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
		fmt.Fprintln(w)
		ins = []Input{{Name: "pooled", Run: run}}
		paths = []string{"pooled"}
	}
	if o.Ratio != "" {
		a, b, ok := strings.Cut(o.Ratio, ":")
		if !ok || a == "" || b == "" {
			return fmt.Errorf("--ratio %q: want two workloads as A:B, e.g. tcp_stream:iperf3_tcp", o.Ratio)
		}
		for _, in := range ins {
			if err := Ratios(w, in.Run, a, b); err != nil {
				return err
			}
		}
		return nil
	}
	for i, in := range ins {
		if len(ins) > 1 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "=== %s ===\n", paths[i])
		}
		Table(w, in.Run)
	}
	if o.Hgrm != "" {
		for _, in := range ins {
			files, err := WriteHgrm(o.Hgrm, in.Run)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %d .hgrm files to %s\n", len(files), o.Hgrm)
		}
	}
	return WriteOutputs(w, o.HTML, o.CSV, ins)
}

// ReadRuns reads run files; a missing one is named with the fix.
func ReadRuns(paths []string) ([]Input, error) {
	var ins []Input
	for _, p := range paths {
		run, err := result.Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; name a results file written by cnperf run (cnperf-results/run-....json)", p)
		}
		if err != nil {
			return nil, err
		}
		ins = append(ins, NewInput(p, run))
	}
	return ins, nil
}

// WriteOutputs writes the HTML page and the CSV files of `report` and
// `run` when asked for, saying so on w.
func WriteOutputs(w io.Writer, html, csvDir string, ins []Input) error {
	if html != "" {
		var b bytes.Buffer
		if err := HTML(&b, ins); err != nil {
			return err
		}
		if err := os.WriteFile(html, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--html %s: %v; choose a file in a writable folder", html, err)
		}
		fmt.Fprintf(w, "html: %s\n", html)
	}
	if csvDir != "" {
		files, err := WriteCSV(csvDir, ins)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "csv: %d files in %s\n", len(files), csvDir)
	}
	return nil
}

// CheckOutFile refuses, before any work, an output path whose folder does
// not exist or that is not a regular file.
func CheckOutFile(flagName, path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: folder %s does not exist; create it first or choose another path", flagName, path, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file; choose a file path such as report.html", flagName, path)
	}
	return nil
}
