//go:build race

package tables

// raceEnabled is true under the race detector, which changes allocation counts.
const raceEnabled = true
