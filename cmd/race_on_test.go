//go:build race

package cmd

// raceSlowdown is how many times slower the race detector makes a test
// that reads hundreds of megabytes (a bounded read of /dev/zero).
const raceSlowdown = 4
