package npkl

import (
	"math"

	"github.com/kernelrank/kernelrank/learners"
)

// SolverParams declares the parameters the embedding learners built on
// this solver share: the duality-gap tolerance (tolDoc says of what), the
// eigensolver and the seed of the Lanczos start vector.
func SolverParams(tolDoc string) []learners.Param {
	tol := learners.Float("tol", 1e-4, 0, 1, tolDoc)
	tol.MinExclusive = true
	return []learners.Param{
		tol,
		learners.Enum("eigensolver", "auto", []string{"auto", "dense", "lanczos"}, "eigensolver (see simplenpkl)"),
		learners.Int("seed", 1, 0, math.MaxInt32, "seed of the Lanczos start vector"),
	}
}

// ParseEigensolver maps "auto", "dense" and "lanczos" to an Eigensolver.
func ParseEigensolver(s string) Eigensolver {
	for _, e := range []Eigensolver{Dense, Lanczos} {
		if s == e.String() {
			return e
		}
	}
	return Auto
}
