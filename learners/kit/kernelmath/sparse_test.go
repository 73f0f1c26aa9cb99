package kernelmath

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// handSparse is the 4 x 4 matrix
//
//	[ 1  2  0  0 ]
//	[ 2  0  0 -1 ]
//	[ 0  0  3  0 ]
//	[ 0 -1  0  0 ]
//
// given with a duplicate (2 = 1.5 + 0.5), a mirrored orientation ((3,1)
// rather than (1,3)) and a pair that cancels ((2,3): 4 - 4).
func handSparse(t *testing.T) *SparseSym {
	t.Helper()
	s, err := NewSparseSym(4, []Triplet{
		{0, 0, 1}, {0, 1, 1.5}, {1, 0, 0.5}, {3, 1, -1}, {2, 2, 3}, {2, 3, 4}, {3, 2, -4},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSparseSymByHand(t *testing.T) {
	s := handSparse(t)
	want := [4][4]float64{{1, 2, 0, 0}, {2, 0, 0, -1}, {0, 0, 3, 0}, {0, -1, 0, 0}}
	for i := range 4 {
		for j := range 4 {
			near(t, "At", s.At(i, j), want[i][j], 0)
		}
	}
	if s.NNZ() != 6 {
		t.Errorf("NNZ = %d, want 6 (both triangles, cancelled pair dropped)", s.NNZ())
	}
	row := make([]float64, 4)
	s.Row(1, row)
	for j, w := range want[1] {
		near(t, "Row(1)", row[j], w, 0)
	}
	for i, w := range []float64{3, 1, 3, -1} {
		near(t, "RowSums", s.RowSums()[i], w, 0)
	}
	for i, w := range []float64{1, 0, 3, 0} {
		near(t, "Diag", s.Diag()[i], w, 0)
	}
	dst := make([]float64, 4)
	s.Apply(dst, []float64{1, 1, 1, 2})
	for i, w := range []float64{3, 0, 3, -1} {
		near(t, "Apply", dst[i], w, 0)
	}
	// <S,S> = 1 + 4+4 + 9 + 1+1 = 20
	near(t, "Frobenius", s.Frobenius(s), 20, 0)
	near(t, "Scale", s.Scale(-2).At(1, 3), 2, 0)
	if s.Scale(0).NNZ() != 0 {
		t.Error("Scale(0) keeps non-zeros")
	}
	// S - S/2 + ... : S + (-1) S is empty; S + 1 * E_22 changes one entry.
	if d := s.Add(s, -1); d.NNZ() != 0 {
		t.Errorf("S - S has %d non-zeros", d.NNZ())
	}
	e, _ := NewSparseSym(4, []Triplet{{2, 2, 1}, {0, 3, 5}})
	sum := s.Add(e, 2)
	near(t, "Add (2,2)", sum.At(2, 2), 5, 0)
	near(t, "Add (3,0)", sum.At(3, 0), 10, 0)
	near(t, "Add (0,1)", sum.At(0, 1), 2, 0)
	if !mat.EqualApprox(s.Dense(), mat.NewSymDense(4, []float64{1, 2, 0, 0, 2, 0, 0, -1, 0, 0, 3, 0, 0, -1, 0, 0}), 0) {
		t.Error("Dense differs")
	}
}

func TestNewSparseSymErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		e    []Triplet
		want string
	}{
		{"row out of range", []Triplet{{4, 0, 1}}, "outside"},
		{"negative", []Triplet{{0, -1, 1}}, "outside"},
		{"nan", []Triplet{{0, 1, nan()}}, "NaN"},
	} {
		_, err := NewSparseSym(4, c.e)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

// randomSparse returns a random symmetric sparse matrix with about density
// n^2 non-zeros, and its dense form.
func randomSparse(n int, density float64, r *rand.Rand) (*SparseSym, *mat.SymDense) {
	var e []Triplet
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if r.Float64() < density {
				e = append(e, Triplet{i, j, r.NormFloat64()})
			}
		}
	}
	s, err := NewSparseSym(n, e)
	if err != nil {
		panic(err)
	}
	d := mat.NewSymDense(n, nil)
	for _, t := range e {
		d.SetSym(t.I, t.J, t.V)
	}
	return s, d
}

func TestCenteredFrobeniusMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	a, ad := randomSparse(23, 0.2, r)
	b, bd := randomSparse(23, 0.3, r)
	near(t, "Frobenius", a.Frobenius(b), Frobenius(ad, bd), 1e-12)
	want := Frobenius(Center(ad), Center(bd))
	near(t, "CenteredFrobenius", CenteredFrobenius(a, b), want, 1e-10)
	// A constant matrix is annihilated by centring.
	var ones []Triplet
	for i := 0; i < 23; i++ {
		for j := i; j < 23; j++ {
			ones = append(ones, Triplet{i, j, 1})
		}
	}
	c, _ := NewSparseSym(23, ones)
	near(t, "CenteredFrobenius(1 1^T, B)", CenteredFrobenius(c, b), 0, 1e-10)
}
