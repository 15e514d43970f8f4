//go:build !unix

package memservice

import "testing"

// A cpuMeter reports nothing where the process's processor time is not at hand.
type cpuMeter struct{}

func startCPU() *cpuMeter { return &cpuMeter{} }

func (*cpuMeter) stop()             {}
func (*cpuMeter) resume()           {}
func (*cpuMeter) report(*testing.B) {}
