//go:build !race

// Package racedet tells whether the race detector is on. It slows every
// memory access several times, so tests skip their latency and rate
// assertions under it; scripts/test.sh runs the packages that have such
// assertions a second time without it.
package racedet

// On: this binary was built with the race detector.
const On = false
