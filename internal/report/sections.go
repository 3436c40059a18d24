package report

import kit "github.com/cnperf/cnperf/internal/section"

// The sections report still draws itself, registered with the ones the
// experiments register (package section), in the order of the text and of
// the page: the experiments' take their places between these by rank.
func init() {
	for _, s := range []kit.Info{
		{Name: "comparison", HTML: comparisonSection, HTMLRank: 10},
		{Name: "replicas", Text: replicas, TextRank: 20},
		{Name: "by-size", HTML: sizeSection, HTMLRank: 20}, // runs of one size each overlaid too, not only a sweep
		{Name: "spectrum", HTML: spectrumSection, HTMLRank: 30},
		{Name: "tuning", Text: Tuning, TextRank: 80},
		{Name: "studies", HTML: seedSection, HTMLRank: 90},
		{Name: "environment", HTML: environmentSection, HTMLRank: 100},
		{Name: "networks", HTML: networksSection, HTMLRank: 110},
	} {
		kit.Register(s)
	}
}
