package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
)

// WriteHgrm writes every result's latency distributions as HdrHistogram
// .hgrm text into dir: NAME.hgrm for the main (corrected) latency,
// NAME.uncorrected.hgrm and NAME.send_lag.hgrm beside it for open-loop
// steps. It returns the files written.
func WriteHgrm(dir string, run *result.Run) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
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
		hs := map[string]string{"": r.Histogram}
		for k, v := range r.Metrics.Histograms {
			hs["."+fileSafe(k)] = v // a key from the file is no path
		}
		for suffix, enc := range hs {
			h, err := hist.Decode(enc)
			if err != nil {
				return files, err
			}
			path := filepath.Join(dir, base+suffix+".hgrm")
			f, err := os.Create(path)
			if err != nil {
				return files, err
			}
			err = h.WriteHgrm(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return files, fmt.Errorf("writing %s: %w", path, err)
			}
			files = append(files, path)
		}
	}
	return files, nil
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
