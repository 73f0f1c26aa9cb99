package demo

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// socialRNG is the random source of the social generator: a PCG-DXSM stream
// (math/rand/v2.PCG, a fixed algorithm) and samplers written here on top of
// its Uint64, so that the output does not depend on how math/rand/v2
// implements IntN, NormFloat64 or Shuffle in a given Go release. Every phase
// of the generator has its own stream (seed, phase), so that changing one
// phase's parameters leaves the draws of the others alone.
type socialRNG struct{ src *rand.PCG }

// Phases of the generator, the second word of each PCG stream.
const (
	phaseUsers uint64 = iota + 1
	phasePhotos
	phaseGroups
	phaseFriends
	phaseClosure
	phaseComments
	phaseFaves
)

func newSocialRNG(seed, phase uint64) *socialRNG {
	return &socialRNG{src: rand.NewPCG(seed, 0x9e3779b97f4a7c15^phase)}
}

// float returns a uniform value in [0, 1).
func (r *socialRNG) float() float64 { return float64(r.src.Uint64()>>11) / (1 << 53) }

// intn returns a uniform value in [0, n), n > 0 (multiply-high; the bias is
// below n / 2^64).
func (r *socialRNG) intn(n int) int {
	hi, _ := bits.Mul64(r.src.Uint64(), uint64(n))
	return int(hi)
}

// bernoulli returns true with probability p.
func (r *socialRNG) bernoulli(p float64) bool { return r.float() < p }

// normal returns a standard normal value (Box-Muller, one value a call).
func (r *socialRNG) normal() float64 {
	u1 := 1 - r.float() // (0, 1]
	u2 := r.float()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// pareto returns a Pareto(1, alpha) value: P(X > x) = x^-alpha, x >= 1.
func (r *socialRNG) pareto(alpha float64) float64 {
	return math.Pow(1-r.float(), -1/alpha)
}

// geometric returns the number of failures before the first success of
// trials with success probability 1/(1+mean): a value >= 0 of the given
// mean.
func (r *socialRNG) geometric(mean float64) int {
	if mean <= 0 {
		return 0
	}
	p := 1 / (1 + mean)
	return int(math.Floor(math.Log(1-r.float()) / math.Log(1-p)))
}

// poisson returns a Poisson value of the given mean (Knuth's product method
// up to a mean of 30, the rounded normal approximation above).
func (r *socialRNG) poisson(mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		return max(0, int(math.Round(mean+math.Sqrt(mean)*r.normal())))
	}
	l, k, p := math.Exp(-mean), 0, r.float()
	for p > l {
		k++
		p *= r.float()
	}
	return k
}

// weighted returns an index drawn with probability proportional to the
// weights, given as their running sums (cum[k] = w_0 + ... + w_k, the last
// positive).
func (r *socialRNG) weighted(cum []float64) int {
	x := r.float() * cum[len(cum)-1]
	k := sort.SearchFloat64s(cum, x)
	for k < len(cum)-1 && cum[k] <= x { // x equal to a running sum
		k++
	}
	return k
}

// cumsum returns the running sums of w.
func cumsum(w []float64) []float64 {
	out := make([]float64, len(w))
	s := 0.0
	for k, v := range w {
		s += v
		out[k] = s
	}
	return out
}
