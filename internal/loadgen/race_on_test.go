//go:build race

package loadgen

// raceOn: the race detector slows every memory access several times, so
// latency and rate assertions do not hold; scripts/test.sh runs this
// package a second time without it for them.
const raceOn = true
