// Package internal holds no code: its directories are the project's
// private packages on two floors (docs/architecture.md, "Packages").
//
// The ground floor lies below the facades: admission, cputime, dataset,
// demo, jobs, metrics, redistest and vecmath import no facade (search,
// recommend), no server and no package of the upper floor, so that the
// facades and the learners can import them.
//
// The top of the house holds the tools above the facades: bench, deploy,
// eval and retrain. They open, run and measure what the facades offer,
// and only the commands (cmd/...) import them.
//
// floors_test.go checks both rules and that every package here is on one
// floor.
package internal
