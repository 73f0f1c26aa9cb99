package social

import (
	"context"
	"testing"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

var benchData = []string{"ego-facebook", "blogcatalog"}

// BenchmarkBuildKernels builds every kernel the data has, in both modes
// (thesis mode includes the row-maximum sweep and the Lanczos PSD check).
func BenchmarkBuildKernels(b *testing.B) {
	for _, name := range benchData {
		ds, _ := realDataset(b, name)
		for _, mode := range []Mode{ModeDefault, ModeThesis} {
			b.Run(name+"/"+string(mode), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{Mode: mode}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkKernel builds one default-mode kernel and reports the non-zeros
// of its factor X (nnzX, for X X^T kernels) and of K itself (nnzK, what a
// materialised sparse K would hold; not counted for the dense
// reg-laplacian).
func BenchmarkKernel(b *testing.B) {
	for _, name := range benchData {
		ds, _ := realDataset(b, name)
		for _, kernel := range AllKernels() {
			opts := KernelOptions{Kernels: []string{kernel}}
			if _, err := BuildKernels(context.Background(), ds, ds.FullView(), opts); err != nil {
				continue // the data has no such modality
			}
			b.Run(name+"/"+kernel, func(b *testing.B) {
				b.ReportAllocs()
				var ks []NamedKernel
				for b.Loop() {
					ks, _ = BuildKernels(context.Background(), ds, ds.FullView(), opts)
				}
				k := ks[0].K
				if s, ok := k.(*kernelmath.ScaledKernel); ok {
					k = s.Base()
				}
				if g, ok := k.(*kernelmath.Gram); ok {
					b.ReportMetric(float64(g.FactorNNZ()), "nnzX")
				}
				if kernel != KernelRegLaplacian {
					b.ReportMetric(float64(countNonzeros(k)), "nnzK")
				}
			})
		}
	}
}

func countNonzeros(k kernelmath.KernelMatrix) int {
	row := make([]float64, k.Dim())
	nnz := 0
	for i := range row {
		k.Row(i, row)
		for _, v := range row {
			if v != 0 {
				nnz++
			}
		}
	}
	return nnz
}

// BenchmarkKernelRow computes one row of each default-mode kernel, the
// access a recommender makes for one user (the users are taken in turn).
func BenchmarkKernelRow(b *testing.B) {
	for _, name := range benchData {
		ds, _ := realDataset(b, name)
		ks, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range ks {
			b.Run(name+"/"+k.Name, func(b *testing.B) {
				b.ReportAllocs()
				row := make([]float64, ds.N())
				i := 0
				for b.Loop() {
					k.K.Row(i%ds.N(), row)
					i += 97
				}
			})
		}
	}
}

// BenchmarkInnerProducts computes the centred inner products alignment
// needs (every pair of default-mode kernels and the friend graph), without
// the reg-laplacian, whose rows cost one solve each (see BenchmarkKernelRow).
func BenchmarkInnerProducts(b *testing.B) {
	for _, name := range benchData {
		ds, _ := realDataset(b, name)
		ks, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{})
		if err != nil {
			b.Fatal(err)
		}
		y, err := FriendMatrix(ds.N(), ds.Friends)
		if err != nil {
			b.Fatal(err)
		}
		var list []kernelmath.KernelMatrix
		for _, k := range ks {
			if k.Name != KernelRegLaplacian {
				list = append(list, k.K)
			}
		}
		list = append(list, y)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := kernelmath.KernelInnerProducts(context.Background(), list, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
