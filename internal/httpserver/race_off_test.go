//go:build !race

package httpserver

const raceOn = false
