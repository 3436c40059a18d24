package report

import kit "github.com/cnperf/cnperf/internal/section"

// sizeOf reads the message size of a sweep's step (the kit's SizeOf).
func sizeOf(step string) int { return kit.SizeOf(step) }
