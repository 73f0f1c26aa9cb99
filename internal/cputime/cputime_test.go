package cputime

import "testing"

// Work done by this process shows in its CPU time, which never goes back.
func TestProcessCountsWork(t *testing.T) {
	before := Process()
	x := 1.0
	for i := 0; i < 50_000_000; i++ {
		x = x*1.0000001 + 1e-9
	}
	after := Process()
	if after <= before {
		t.Fatalf("CPU time %v after a busy loop (result %g), %v before: want it to grow", after, x, before)
	}
}
