package kernelmath

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkPartial compares PartialEigen with the full dense solver on a: all
// eigenvalues, and for the index range [lo, hi) orthonormal vectors with
// small residuals.
func checkPartial(t *testing.T, name string, pe *PartialEigen, a *mat.SymDense, lo, hi int) {
	t.Helper()
	n := a.SymmetricDim()
	want, _, err := Eigen(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := pe.Factorize(a); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := pe.Values(nil)
	scale := math.Max(1, math.Max(math.Abs(want[0]), math.Abs(want[n-1])))
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*scale*float64(n) {
			t.Fatalf("%s: eigenvalue %d = %g, want %g", name, i, got[i], want[i])
		}
	}
	var v mat.Dense
	if err := pe.VectorsTo(&v, lo, hi); err != nil {
		t.Fatalf("%s: vectors: %v", name, err)
	}
	p := hi - lo
	if p == 0 {
		return
	}
	var gram mat.Dense
	gram.Mul(v.T(), &v)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			w := 0.0
			if i == j {
				w = 1
			}
			if d := math.Abs(gram.At(i, j) - w); d > 1e-10 {
				t.Fatalf("%s: V^T V (%d,%d) off by %g", name, i, j, d)
			}
		}
	}
	var av mat.Dense
	av.Mul(a, &v)
	for c := 0; c < p; c++ {
		res := 0.0
		for r := 0; r < n; r++ {
			d := av.At(r, c) - got[lo+c]*v.At(r, c)
			res += d * d
		}
		if math.Sqrt(res) > 1e-10*scale*math.Sqrt(float64(n)) {
			t.Fatalf("%s: residual of vector %d = %g", name, lo+c, math.Sqrt(res))
		}
	}
}

func TestPartialEigenRandom(t *testing.T) {
	var pe PartialEigen // reused across sizes on purpose
	for _, n := range []int{1, 2, 3, 7, 40, 120} {
		a := randomSym(n, uint64(n))
		checkPartial(t, "random all", &pe, a, 0, n)
		checkPartial(t, "random top", &pe, a, n-n/3, n)
		checkPartial(t, "random bottom", &pe, a, 0, (n+1)/2)
		checkPartial(t, "random none", &pe, a, n/2, n/2)
	}
}

// withSpectrum returns Q diag(vals) Q^T for a random orthogonal Q.
func withSpectrum(vals []float64, seed uint64) *mat.SymDense {
	n := len(vals)
	r := rand.New(rand.NewPCG(seed, 2))
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += q.At(i, k) * vals[k] * q.At(j, k)
			}
			a.SetSym(i, j, s)
		}
	}
	return a
}

func TestPartialEigenRepeatedAndClustered(t *testing.T) {
	var pe PartialEigen
	// Exactly repeated eigenvalues (a rank-3 projector plus a negative part)
	// and a tight cluster: inverse iteration must still return orthonormal
	// vectors.
	vals := []float64{2, 2, 2, 1 + 1e-9, 1, 1 - 1e-9, 0, 0, 0, 0, -0.5, -0.5, -3}
	a := withSpectrum(vals, 5)
	n := len(vals)
	checkPartial(t, "repeated all", &pe, a, 0, n)
	checkPartial(t, "repeated top 3", &pe, a, n-3, n)
	checkPartial(t, "cluster straddled", &pe, a, n-5, n) // cuts the cluster at 1
	checkPartial(t, "zeros", &pe, a, 3, 7)
	// A diagonal matrix: T splits into 1 x 1 blocks.
	d := mat.NewSymDense(5, nil)
	for i, v := range []float64{3, -1, 3, 0, 2} {
		d.SetSym(i, i, v)
	}
	checkPartial(t, "diagonal", &pe, d, 2, 5)
	// A graph Laplacian with three components: 0 three times.
	g := NewGraph(9, []Pair{{0, 1}, {1, 2}, {3, 4}, {4, 5}, {5, 3}, {6, 7}, {7, 8}}, func(Pair) float64 { return 1 })
	checkPartial(t, "laplacian null space", &pe, g.LaplacianDense(), 0, 4)
	// Zero matrix.
	checkPartial(t, "zero", &pe, mat.NewSymDense(6, nil), 0, 6)
}

func TestPartialEigenPSDProjection(t *testing.T) {
	// The projection onto the PSD cone from the positive eigenpairs equals
	// ProjectPSD's.
	a := randomSym(60, 11)
	var pe PartialEigen
	if err := pe.Factorize(a); err != nil {
		t.Fatal(err)
	}
	vals := pe.Values(nil)
	lo := 0
	for lo < len(vals) && vals[lo] <= 0 {
		lo++
	}
	var v mat.Dense
	if err := pe.VectorsTo(&v, lo, len(vals)); err != nil {
		t.Fatal(err)
	}
	got := FromEigen(vals[lo:], &v, 0)
	want, _, err := ProjectPSD(a)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		for j := 0; j < 60; j++ {
			if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e-10 {
				t.Fatalf("A+ (%d,%d) off by %g", i, j, d)
			}
		}
	}
}

func TestPartialEigenNoAllocsInLoop(t *testing.T) {
	a := randomSym(50, 3)
	var pe PartialEigen
	v := mat.NewDense(50, 10, nil)
	run := func() {
		if err := pe.Factorize(a); err != nil {
			t.Fatal(err)
		}
		if err := pe.VectorsTo(v, 40, 50); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if allocs := testing.AllocsPerRun(5, run); allocs > 2 {
		t.Errorf("%v allocations per call after the first", allocs)
	}
}

func BenchmarkPartialEigen200(b *testing.B) {
	a := withSpectrum(func() []float64 {
		v := make([]float64, 200)
		for i := range v {
			v[i] = float64(i-130) / 10
		}
		return v
	}(), 1)
	var pe PartialEigen
	v := mat.NewDense(200, 70, nil)
	b.Run("values", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			pe.Factorize(a)
		}
	})
	for _, gonum := range []bool{false, true} {
		name := "values+70vectors"
		if gonum {
			name += "/gonum" // Dsytrd and Dormqr: the reference path
		}
		b.Run(name, func(b *testing.B) {
			pe := PartialEigen{GonumTridiag: gonum}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				pe.Factorize(a)
				pe.VectorsTo(v, 130, 200)
			}
		})
	}
	b.Run("EigenSym", func(b *testing.B) {
		b.ReportAllocs()
		var es mat.EigenSym
		for i := 0; i < b.N; i++ {
			es.Factorize(a, true)
		}
	})
}

// packedSpectrum is 120 eigenvalues: 40 negative, 60 packed near 0 and 20
// within 2e-5 of 0.5.
func packedSpectrum() []float64 {
	vals := make([]float64, 120)
	for i := range vals {
		switch {
		case i < 40:
			vals[i] = -10 + float64(i)*0.2
		case i < 100:
			vals[i] = float64(i-40) * 0.006
		default:
			vals[i] = 0.5 + float64(i-100)*1e-6
		}
	}
	return vals
}

func TestPartialEigenPackedSpectrum(t *testing.T) {
	// Many wanted eigenvalues packed close together (gaps from 1e-7 to 1e-3
	// of the norm), as a PSD projection of M - L_alpha sees: the vectors must
	// stay orthonormal with small residuals.
	vals := packedSpectrum()
	a := withSpectrum(vals, 9)
	var pe PartialEigen
	checkPartial(t, "packed", &pe, a, 40, 120)
	checkPartial(t, "packed tail", &pe, a, 95, 120)
}

// The fused reduction and gonum's Dsytrd give the same eigenvalues and the
// same positive eigenvectors (up to sign), also on matrices with zero
// columns below the diagonal (tau = 0 steps) and exact low rank.
func TestPartialEigenFusedMatchesDsytrd(t *testing.T) {
	lowRank := func(n, r int, seed uint64) *mat.SymDense {
		vals := make([]float64, n)
		for i := 0; i < r; i++ {
			vals[n-1-i] = float64(i+1) / float64(r)
		}
		vals[0] = -2
		return withSpectrum(vals, seed)
	}
	block := mat.NewSymDense(8, nil) // a zero row and column in the middle
	for i := 0; i < 8; i++ {
		for j := i; j < 8; j++ {
			if i != 3 && j != 3 {
				block.SetSym(i, j, float64((i*7+j*3)%5)-2)
			}
		}
	}
	for _, c := range []struct {
		name string
		a    *mat.SymDense
	}{
		{"random 1", randomSym(1, 1)}, {"random 2", randomSym(2, 2)}, {"random 3", randomSym(3, 3)},
		{"random 90", randomSym(90, 9)}, {"low rank", lowRank(70, 12, 4)}, {"zero column", block},
	} {
		n := c.a.SymmetricDim()
		var fused, ref PartialEigen
		ref.GonumTridiag = true
		if err := fused.Factorize(c.a); err != nil {
			t.Fatal(err)
		}
		if err := ref.Factorize(c.a); err != nil {
			t.Fatal(err)
		}
		fv, rv := fused.Values(nil), ref.Values(nil)
		scale := math.Max(math.Abs(rv[0]), math.Abs(rv[n-1]))
		for i := range fv {
			if d := math.Abs(fv[i] - rv[i]); d > 1e-13*float64(n)*math.Max(scale, 1) {
				t.Fatalf("%s: eigenvalue %d: %g vs %g", c.name, i, fv[i], rv[i])
			}
		}
		lo := 0
		for lo < n && rv[lo] <= 1e-8*scale {
			lo++
		}
		if lo == n {
			continue
		}
		var fz, rz mat.Dense
		if err := fused.VectorsTo(&fz, lo, n); err != nil {
			t.Fatal(err)
		}
		if err := ref.VectorsTo(&rz, lo, n); err != nil {
			t.Fatal(err)
		}
		// The projections onto the positive eigenspace agree.
		fp := FromEigen(fv[lo:], &fz, 0)
		rp := FromEigen(rv[lo:], &rz, 0)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if d := math.Abs(fp.At(i, j) - rp.At(i, j)); d > 1e-10*math.Max(scale, 1) {
					t.Fatalf("%s: A+ (%d,%d) differs by %g", c.name, i, j, d)
				}
			}
		}
	}
}

// Vectors computed two at a time (consecutive vectors of a block, the
// second starting a cluster) are, bit for bit, those computed one at a time,
// on spectra with well separated, packed and coincident eigenvalues and on
// a matrix whose tridiagonal splits into blocks; and FactorizeFull, on the
// matrix assembled in Matrix's storage, gives FactorizeDense's eigenvalues
// and vectors bit for bit.
func TestPartialEigenPairsAndFull(t *testing.T) {
	packed := packedSpectrum()
	spread := make([]float64, 90)
	for i := range spread {
		spread[i] = float64(i-30) / 7
	}
	repeated := make([]float64, 60)
	for i := range repeated {
		repeated[i] = float64(i / 6) // groups of six equal eigenvalues
	}
	split := mat.NewSymDense(9, nil) // two blocks, 4 and 5 rows
	for i := 0; i < 9; i++ {
		split.SetSym(i, i, float64(i%4)+0.5)
		if i != 3 && i < 8 {
			split.SetSym(i, i+1, 1)
		}
	}
	for _, c := range []struct {
		name   string
		a      *mat.SymDense
		lo, hi int
	}{
		{"packed", withSpectrum(packed, 9), 40, 120},
		{"spread", withSpectrum(spread, 4), 0, 90},
		{"repeated", withSpectrum(repeated, 5), 10, 60},
		{"split", split, 0, 9},
	} {
		n := c.a.SymmetricDim()
		vectors := func(pe *PartialEigen) *mat.Dense {
			var v mat.Dense
			if err := pe.VectorsTo(&v, c.lo, c.hi); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return &v
		}
		one := PartialEigen{onePerStep: true}
		if err := one.Factorize(c.a); err != nil {
			t.Fatal(err)
		}
		want := vectors(&one)
		var two PartialEigen
		if err := two.Factorize(c.a); err != nil {
			t.Fatal(err)
		}
		if got := vectors(&two); !mat.Equal(got, want) {
			t.Errorf("%s: vectors two at a time differ from one at a time", c.name)
		}
		var full PartialEigen
		dst := full.Matrix(n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				dst[i*n+j] = c.a.At(i, j)
			}
		}
		if err := full.FactorizeFull(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(full.Values(nil), two.Values(nil)) {
			t.Errorf("%s: FactorizeFull's eigenvalues differ from Factorize's", c.name)
		}
		if got := vectors(&full); !mat.Equal(got, want) {
			t.Errorf("%s: FactorizeFull's vectors differ from Factorize's", c.name)
		}
	}
}
