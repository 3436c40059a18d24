//go:build !race

package load_test

const raceOn = false
