package social

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// sigmaPairs is the number of random user pairs the bandwidth of the
// approximate visual kernel is estimated from.
const sigmaPairs = 20000

// visual returns K1 = exp(-||u_i - u_j||^2 / sigma^2) over the users' mean
// photo features u_i, sigma the mean Euclidean distance between users
// (thesis, 7.2.2.1). Users without photos have zero rows.
//
// The kernel is dense: up to VisualDenseMax users it is formed exactly
// (O(n^2 d) time, 8 n^2 bytes). Above, it is the low-rank Z Z^T of random
// Fourier features (Rahimi and Recht 2007), z(u) = sqrt(2/D) cos(W u + b)
// with W ~ N(0, 2/sigma^2) and b ~ U[0, 2 pi): O(n D d) time, 8 n D bytes,
// entries within about 1/sqrt(D) of the exact ones, and PSD by construction;
// sigma is then estimated from sigmaPairs random pairs.
func (in *kernelInput) visual() (base, error) {
	var users []int
	var centroids []float64
	dim := 0
	for i := range in.ds.Users {
		if c := centroid(&in.ds.Users[i]); c != nil {
			users = append(users, i)
			centroids = append(centroids, c...)
			dim = len(c)
		}
	}
	if len(users) == 0 {
		return base{missing: "photos with visual vectors"}, nil
	}
	x := mat.NewDense(len(users), dim, centroids)
	n := in.ds.N()
	rng := rand.New(rand.NewPCG(in.opts.Seed, 0x5eed))
	if n <= in.opts.VisualDenseMax {
		d2 := kernelmath.SqDistances(x)
		inv := invSquare(meanDistance(len(users), d2.At, math.MaxInt, rng))
		k := mat.NewSymDense(n, nil)
		for a, i := range users {
			for b := a; b < len(users); b++ {
				k.SetSym(i, users[b], math.Exp(-d2.At(a, b)*inv))
			}
		}
		return base{k: kernelmath.DenseKernel{K: k}, unit: true, fold: visualDenseFold(users, x, inv)}, nil
	}
	sqDist := func(a, b int) float64 {
		d := 0.0
		for c := 0; c < dim; c++ {
			t := x.At(a, c) - x.At(b, c)
			d += t * t
		}
		return d
	}
	scale := math.Sqrt(2 * invSquare(meanDistance(len(users), sqDist, sigmaPairs, rng)))
	features := in.opts.VisualFeatures
	w := mat.NewDense(dim, features, nil)
	for r := 0; r < dim; r++ {
		for c := 0; c < features; c++ {
			w.Set(r, c, rng.NormFloat64()*scale)
		}
	}
	phase := make([]float64, features)
	for c := range phase {
		phase[c] = 2 * math.Pi * rng.Float64()
	}
	var proj mat.Dense
	proj.Mul(x, w)
	z := mat.NewDense(n, features, nil)
	amp := math.Sqrt(2 / float64(features))
	for a, i := range users {
		row := z.RawRowView(i)
		for c, v := range proj.RawRowView(a) {
			row[c] = amp * math.Cos(v+phase[c])
		}
	}
	// Unit diagonal like the exact RBF it approximates, in every mode.
	rff := func(c []float64, dst []float64) bool {
		if len(c) != dim {
			return false // features of another extractor: as if none
		}
		for f := range dst {
			s := 0.0
			for r, v := range c {
				s += v * w.At(r, f)
			}
			dst[f] = amp * math.Cos(s+phase[f])
		}
		return true
	}
	return base{k: kernelmath.CosineScaled(kernelmath.NewLowRank(z)), unit: true, fold: visualFeaturesFold(z, rff)}, nil
}

// centroid returns the mean visual vector of u's photos that have one
// (nil: none).
func centroid(u *User) []float64 {
	var sum []float64
	count := 0
	for _, p := range u.Photos {
		if len(p.Visual) == 0 {
			continue
		}
		if sum == nil {
			sum = make([]float64, len(p.Visual))
		}
		floats.Add(sum, p.Visual)
		count++
	}
	if count == 0 {
		return nil
	}
	floats.Scale(1/float64(count), sum)
	return sum
}

// invSquare returns 1/sigma^2, or 0 when sigma is 0 (all users alike: the
// kernel is then 1 between every two users with photos).
func invSquare(sigma float64) float64 {
	if sigma == 0 {
		return 0
	}
	return 1 / (sigma * sigma)
}

// meanDistance returns the mean of sqrt(sqDist(a, b)) over all pairs a < b
// of m points when there are at most maxPairs of them, else over maxPairs
// random pairs; 0 when m < 2.
func meanDistance(m int, sqDist func(a, b int) float64, maxPairs int, rng *rand.Rand) float64 {
	if m < 2 {
		return 0
	}
	sum := 0.0
	if pairs := m * (m - 1) / 2; pairs <= maxPairs {
		for a := 0; a < m; a++ {
			for b := a + 1; b < m; b++ {
				sum += math.Sqrt(sqDist(a, b))
			}
		}
		return sum / float64(pairs)
	}
	for range maxPairs {
		a := rng.IntN(m)
		b := rng.IntN(m - 1)
		if b >= a {
			b++
		}
		sum += math.Sqrt(sqDist(a, b))
	}
	return sum / float64(maxPairs)
}
