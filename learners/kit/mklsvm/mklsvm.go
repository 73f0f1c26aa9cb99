// Package mklsvm holds what the SVM-based MKL learners (mkl, twolayer)
// share beyond the numerics: their common parameters and the set-up of an
// input into SVM tasks and base kernels.
package mklsvm

import (
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// Params declares the parameters every SVM-based MKL learner shares:
// the SVM's C and tolerance, and the normalisation of the base kernels.
func Params() []learners.Param {
	return []learners.Param{
		learners.Positive("c", 1, "the SVM's C (the thesis chooses it by 5-fold CV over 10^-2..10^2)"),
		learners.Positive("svm_eps", 1e-3, "SMO stopping tolerance on the maximal KKT violation (LIBSVM's -e)"),
		learners.Enum("normalize", "trace", []string{"trace", "none"},
			"trace: divide every base kernel by its trace over the labelled points (the thesis' unit-trace normalisation on the training data; a no-op on kernels already so normalised); none: use them as given"),
	}
}

// Config holds the values of Params.
type Config struct {
	SVM       kernelmath.SVMOptions
	Normalize bool
}

// NewConfig reads the values of Params.
func NewConfig(v learners.Values) Config {
	return Config{SVM: kernelmath.SVMOptions{C: v.Float("c"), Eps: v.Float("svm_eps")}, Normalize: v.String("normalize") == "trace"}
}

// Setup returns the SVM tasks of in's labels and its base kernels,
// normalised as configured; in has both (the registry checked it). Errors
// wrap ErrInput.
func (c Config) Setup(in *learners.Input) (*kernelmath.SVMTasks, *kernelmath.KernelSet, error) {
	tasks, err := kernelmath.NewSVMTasks(in.Labels)
	if err != nil {
		return nil, nil, err
	}
	ks := kernelmath.NewKernelSet(in.Kernels)
	if c.Normalize {
		ks.UnitTrace(tasks.Points)
	}
	return tasks, ks, nil
}
