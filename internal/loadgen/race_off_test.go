//go:build !race

package loadgen

const raceOn = false
