// Package all registers every plug-in of the learners registry (the
// learners, the fixed re-rank strategies and the mklr pair scorer): import
// it for its side effects.
package all

import (
	// Each import registers its learner in init.
	_ "github.com/kernelrank/kernelrank/learners/alignf"
	_ "github.com/kernelrank/kernelrank/learners/cmvu"
	_ "github.com/kernelrank/kernelrank/learners/fixed"
	_ "github.com/kernelrank/kernelrank/learners/hsicnpk"
	_ "github.com/kernelrank/kernelrank/learners/influence"
	_ "github.com/kernelrank/kernelrank/learners/mkl"
	_ "github.com/kernelrank/kernelrank/learners/mklr"
	_ "github.com/kernelrank/kernelrank/learners/mve"
	_ "github.com/kernelrank/kernelrank/learners/mvspectral"
	_ "github.com/kernelrank/kernelrank/learners/pfskl"
	_ "github.com/kernelrank/kernelrank/learners/simplenpkl"
	_ "github.com/kernelrank/kernelrank/learners/spe"
	_ "github.com/kernelrank/kernelrank/learners/tlk"
	_ "github.com/kernelrank/kernelrank/learners/tsmkl"
	_ "github.com/kernelrank/kernelrank/learners/twolayer"
	_ "github.com/kernelrank/kernelrank/learners/umkl"
)
