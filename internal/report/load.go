package report

import (
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
)

// searchStep says a step is part of a max-rate search: its rate differs
// per network, so a table of it compares nothing; the ladder that follows
// it is the study's table.
func searchStep(label string) bool { return strings.HasPrefix(label, "search ") }

// SearchStep says a step is part of a max-rate search (searchStep): the
// regression gate does not judge it either.
func SearchStep(label string) bool { return searchStep(label) }

// satKey is the saturated flag's figure key: it reads as its cause.
var satKey = result.ExtraKey(result.ExtraSaturated)

// Saturation codes: why a step did not hold its rate, as far as the
// engine could tell (loadgen's conns_busy_pct).
const (
	satNo     = kit.SatNo
	satYes    = kit.SatYes
	satClient = kit.SatClient
	satServer = kit.SatServer
)

func saturation(m result.Metrics) (float64, bool) { return kit.Saturation(m) }

// SaturationNote explains the saturated column's causes under a table.
const SaturationNote = "saturated: YES server = every connection was busy while requests were due (the server did not keep up, or too few --connections); YES client = a connection was free, the client thread was late (its CPU busy or descheduled; `cnperf load pace` shows this machine's floor)"
