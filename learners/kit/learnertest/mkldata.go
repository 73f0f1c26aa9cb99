package learnertest

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Real data for the supervised MKL learners' tests and benchmarks: the
// binary LIBSVM sets of ../shared/data/uci/libsvm and one repetition of
// the protocol of Zhuang's thesis §4.5.1 with C fixed (the thesis chooses
// it by 5-fold CV, which internal/eval runs).

// LIBSVMSet loads uci/libsvm/name from the shared data (md5 checked), with
// class 0 for the smaller label and 1 for the other; it skips tb when the
// shared data is absent.
func LIBSVMSet(tb testing.TB, name string) (*mat.Dense, []int) {
	tb.Helper()
	dir, ok := dataset.DataDir()
	if !ok {
		tb.Skip("shared data not found (../shared/data or $" + dataset.EnvDataDir + "): skipping the real-data test")
	}
	rel := "uci/libsvm/" + name
	if err := dataset.VerifyMD5(dir, rel); err != nil {
		tb.Fatal(err)
	}
	rows, y, err := dataset.LoadLIBSVM(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatal(err)
	}
	d := 0
	for _, r := range rows {
		d = max(d, len(r))
	}
	x := mat.NewDense(len(rows), d, nil)
	for i, r := range rows {
		copy(x.RawRowView(i), r)
	}
	lo := slices.Min(y)
	labels := make([]int, len(y))
	for i, v := range y {
		if v != lo {
			labels[i] = 1
		}
	}
	return x, labels
}

// MKLSplit is one repetition of the thesis' protocol (§4.5.1): a random
// 50/50 train/test split, the features standardised with the training
// mean and deviation, and the base kernels of kernelmath.MKLBaseKernels over
// all points, each divided by the trace of its training block.
type MKLSplit struct {
	Train, Test []int      // ascending
	Features    *mat.Dense // standardised, all points
	Kernels     []*mat.SymDense
	// Labels are the training labels with the test points Unlabeled: the
	// input of a learner that returns its kernel over all points.
	Labels []int
	truth  []int
}

// NewMKLSplit draws the split with the given seed.
func NewMKLSplit(x *mat.Dense, labels []int, seed uint64) *MKLSplit {
	n, d := x.Dims()
	perm := rand.New(rand.NewPCG(seed, 0x4c2)).Perm(n)
	s := &MKLSplit{Train: slices.Sorted(slices.Values(perm[:n/2])), Test: slices.Sorted(slices.Values(perm[n/2:])),
		Labels: make([]int, n), truth: labels}
	train := mat.NewDense(len(s.Train), d, nil)
	for a, i := range s.Train {
		train.SetRow(a, x.RawRowView(i))
	}
	_, mean, std := kernelmath.Standardize(train)
	s.Features = mat.NewDense(n, d, nil)
	for i := range n {
		for f := range d {
			if std[f] > 0 {
				s.Features.Set(i, f, (x.At(i, f)-mean[f])/std[f])
			}
		}
	}
	s.Kernels = kernelmath.MKLBaseKernels(s.Features)
	for _, k := range s.Kernels {
		if tr := kernelmath.TraceOver(k, s.Train); tr > 0 {
			k.ScaleSym(1/tr, k)
		}
	}
	for i := range s.Labels {
		s.Labels[i] = learners.Unlabeled
	}
	for _, i := range s.Train {
		s.Labels[i] = labels[i]
	}
	return s
}

// Accuracy trains a C-SVM on the training block of k, a kernel over all
// points, and returns its test accuracy in percent.
func (s *MKLSplit) Accuracy(tb testing.TB, k *mat.SymDense, c float64) float64 {
	tb.Helper()
	return HeldOutAccuracy(tb, k, s.Labels, s.truth, c)
}

// HeldOutAccuracy trains a C-SVM (class 1 positive) with the kernel k over
// all points on the points labelled in labels and returns its accuracy in
// percent on the Unlabeled ones against truth.
func HeldOutAccuracy(tb testing.TB, k *mat.SymDense, labels, truth []int, c float64) float64 {
	tb.Helper()
	tasks, err := kernelmath.NewSVMTasks(labels)
	if err != nil {
		tb.Fatal(err)
	}
	if len(tasks.Y) != 1 {
		tb.Fatalf("HeldOutAccuracy is binary, the labels have %d classes", len(tasks.Y))
	}
	kt := mat.NewSymDense(len(tasks.Points), nil)
	kernelmath.NewKernelSet([]*mat.SymDense{k}).Restrict(tasks.Points).Combine(kt, []float64{1})
	m, err := kernelmath.TrainSVM(context.Background(), kt, tasks.Y[0], kernelmath.SVMOptions{C: c})
	if err != nil {
		tb.Fatal(err)
	}
	row := make([]float64, len(tasks.Points))
	correct, total := 0, 0
	for i, l := range labels {
		if l != learners.Unlabeled {
			continue
		}
		for a, j := range tasks.Points {
			row[a] = k.At(i, j)
		}
		if (m.Decision(row) > 0) == (truth[i] == 1) {
			correct++
		}
		total++
	}
	return 100 * float64(correct) / float64(total)
}
