package kernelmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A matrix with a known spectrum: a triple eigenvalue 10 on top, then 9
// and a tail below 1. The leading 4-dimensional subspace (the triple one
// with 9) is found whole, orthonormal, with its Ritz values.
func TestLeadingSubspaceKnownSpectrum(t *testing.T) {
	const n = 60
	r := rand.New(rand.NewPCG(4, 4))
	g := mat.NewDense(n, n, nil)
	for i := range g.RawMatrix().Data {
		g.RawMatrix().Data[i] = r.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(g)
	var u mat.Dense
	qr.QTo(&u) // a random orthogonal matrix
	spec := make([]float64, n)
	for i := range spec {
		spec[i] = 0.9 * float64(n-i) / n
	}
	spec[0], spec[1], spec[2], spec[3] = 10, 10, 10, 9
	var ud, full mat.Dense
	ud.Apply(func(_, j int, v float64) float64 { return v * spec[j] }, &u)
	full.Mul(&ud, u.T())
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, (full.At(i, j)+full.At(j, i))/2)
		}
	}
	// Eigenvalue 11 is 0.75: each power step shrinks the leak out of the
	// leading subspace by 0.75/9, so 7 products leave about 1e-7.
	vals, v, err := LeadingSubspace(a, 4, 6, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{10, 10, 10, 9} {
		if math.Abs(vals[i]-want) > 1e-9 {
			t.Errorf("Ritz value %d = %v, want %v", i, vals[i], want)
		}
	}
	// Orthonormal, and inside the span of u's first 4 columns: the
	// projection onto the rest is below the iteration's accuracy.
	checkOrthonormal(t, v, 1e-12)
	var rest mat.Dense
	rest.Mul(u.Slice(0, n, 4, n).T(), v)
	if leak := mat.Norm(&rest, 2); leak > 1e-5 {
		t.Fatalf("the basis has %v of its norm outside the leading eigenspace", leak)
	}
	// Deterministic per seed.
	_, v2, _ := LeadingSubspace(a, 4, 6, 6, 1)
	if !mat.Equal(v, v2) {
		t.Fatal("two calls with one seed differ")
	}
}

func TestOrthonormalizeRowsDropsDependentRows(t *testing.T) {
	v := mat.NewDense(3, 3, []float64{3, 0, 4, 6, 0, 8, 1, 1, 0})
	OrthonormalizeRows(v)
	want := []float64{0.6, 0, 0.8, 0, 0, 0}
	for i, w := range want {
		if math.Abs(v.RawMatrix().Data[i]-w) > 1e-12 {
			t.Fatalf("rows %v, want the first normalised and the second (its multiple) zero", v.RawMatrix().Data)
		}
	}
	// The third is made orthogonal to the first: (1,1,0) - 0.6 (0.6,0,0.8), normalised.
	third := []float64{1 - 0.36, 1, -0.48}
	norm := math.Sqrt(third[0]*third[0] + 1 + third[2]*third[2])
	for j, x := range third {
		if math.Abs(v.At(2, j)-x/norm) > 1e-12 {
			t.Fatalf("third row %v", v.RawRowView(2))
		}
	}
}

// Past the rank of a, the basis is completed with orthonormal directions of
// its null space rather than left with zero columns.
func TestLeadingSubspacePastTheRank(t *testing.T) {
	x := mat.NewDense(20, 2, nil)
	for i := 0; i < 20; i++ {
		x.Set(i, 0, float64(i%5))
		x.Set(i, 1, float64(i%3)-1)
	}
	a := Linear(x) // rank 2
	vals, v, err := LeadingSubspace(a, 6, 4, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkOrthonormal(t, v, 1e-10)
	if !(vals[1] > 1) || math.Abs(vals[2]) > 1e-9 {
		t.Fatalf("Ritz values %v: want two positive, then zeros", vals)
	}
}

// checkOrthonormal fails unless V^T V is the identity to tol.
func checkOrthonormal(t *testing.T, v *mat.Dense, tol float64) {
	t.Helper()
	_, q := v.Dims()
	var vtv mat.Dense
	vtv.Mul(v.T(), v)
	for i := 0; i < q; i++ {
		for j := 0; j < q; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(vtv.At(i, j)-want) > tol {
				t.Fatalf("V^T V (%d, %d) = %v: want %d orthonormal columns", i, j, vtv.At(i, j), q)
			}
		}
	}
}

// mulBlock adds the products in gonum's Dgemm order: the same bits.
func TestMulBlockMatchesDgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 7))
	for _, dims := range [][2]int{{20, 200}, {3, 7}, {70, 130}} {
		l, n := dims[0], dims[1]
		x, a := mat.NewDense(l, n, nil), mat.NewDense(n, n, nil)
		for i := range x.RawMatrix().Data {
			if r.Float64() < 0.8 { // zeros too: both skip them
				x.RawMatrix().Data[i] = r.NormFloat64()
			}
		}
		for i := range a.RawMatrix().Data {
			a.RawMatrix().Data[i] = r.NormFloat64()
		}
		var want mat.Dense
		want.Mul(x, a)
		got := mat.NewDense(l, n, nil)
		got.Apply(func(int, int, float64) float64 { return math.NaN() }, got)
		mulBlock(got, x, a)
		// The same sums in the same order; fused multiply-adds round each
		// term once instead of twice, so each entry is within n roundings
		// of the sum of the terms' magnitudes.
		for i := 0; i < l; i++ {
			for j := 0; j < n; j++ {
				bound := 0.0
				for k := 0; k < n; k++ {
					bound += math.Abs(x.At(i, k) * a.At(k, j))
				}
				if d := math.Abs(got.At(i, j) - want.At(i, j)); !(d <= float64(n)*0x1p-52*bound) {
					t.Fatalf("%d x %d: mulBlock (%d,%d) = %v, Dgemm %v", l, n, i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}
}
