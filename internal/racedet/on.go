//go:build race

package racedet

// On: this binary was built with the race detector.
const On = true
