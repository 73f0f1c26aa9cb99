// Package cputime reads the CPU time this process has used, for benchmarks
// that report it beside wall time: other work on a shared machine inflates
// it far less.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user + system) this process has used.
func Process() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
