package simplenpkl

import (
	"math"

	"github.com/kernelrank/kernelrank/learners/kit/npkl"
)

// Loss is the loss on the alignment T_ij K_ij of a constrained pair.
type Loss string

// The losses of sections 3.2.2-3.2.5.
const (
	LinearLoss      Loss = "linear"       // l(f) = -f: closed form (A1)
	SquareHingeLoss Loss = "square-hinge" // max(0, 1-f)^2 / 2 (A2)
	SquareLoss      Loss = "square"       // (1-f)^2 / 2, equality constraints (A3)
	HingeLoss       Loss = "hinge"        // max(0, 1-f) (A4)
)

// pairDual is the dual of SimpleNPKL with the square hinge, square or hinge
// loss (eq. 3.18 and sections 3.2.4-3.2.5) over the constrained pairs.
//
// Pairs are counted as ordered pairs (i, j) and (j, i), as spec 3.1 resolves
// Lemma 3.4's m = nnz(T): every unordered pair e carries one multiplier
// alpha_e = alpha_ij = alpha_ji, so that in these variables
//
//	J(alpha) = -h(A) + 2 sum_e alpha_e - sum_e alpha_e^2 / C   (square hinge, square)
//	J(alpha) = -h(A) + 2 sum_e alpha_e                         (hinge)
//	A = -L + sum_e alpha_e T_e (E_ij + E_ji),
//
// and dJ/dalpha_e = 2 (1 - T_e K_ij - alpha_e / C), twice the spec's
// gradient (3.19) of one ordered entry. (Counting unordered pairs instead is
// the same problem with C halved, spec 9.1.)
type pairDual struct {
	t    []float64 // T_e in {+1, -1}
	c    float64
	loss Loss
}

var _ npkl.Dual = (*pairDual)(nil)

func (d *pairDual) Len() int { return len(d.t) }

func (d *pairDual) Weights(w, alpha []float64) {
	for e, a := range alpha {
		w[e] = a * d.t[e]
	}
}

func (d *pairDual) Lin(alpha []float64) float64 {
	s := 0.0
	for _, a := range alpha {
		s += 2 * a
		if d.loss != HingeLoss {
			s -= a * a / d.c
		}
	}
	return s
}

func (d *pairDual) Gradient(g, alpha, f []float64) {
	for e, a := range alpha {
		g[e] = 2 * (1 - d.t[e]*f[e]/2)
		if d.loss != HingeLoss {
			g[e] -= 2 * a / d.c
		}
	}
}

// Project enforces alpha >= 0 (square hinge), alpha in [0, C] (hinge, the
// projection section 3.2.5 asks for) or nothing (square loss: alpha is free).
func (d *pairDual) Project(alpha []float64) {
	for e, a := range alpha {
		switch d.loss {
		case SquareHingeLoss:
			alpha[e] = math.Max(0, a)
		case HingeLoss:
			alpha[e] = math.Min(d.c, math.Max(0, a))
		}
	}
}

// Loss returns C sum over ordered pairs of loss(T_ij s K_ij); the rest of
// the primal (3.4) is tr(L K) = -<A0, K>.
func (d *pairDual) Loss(f []float64, s float64) float64 {
	return d.c * pairLoss(d.loss, d.t, f, s)
}

// pairLoss returns sum over ordered pairs of loss(T_ij s K_ij), f_e = 2 K_ij.
func pairLoss(loss Loss, t, f []float64, s float64) float64 {
	sum := 0.0
	for e, fe := range f {
		v := 1 - s*t[e]*fe/2
		switch loss {
		case SquareHingeLoss:
			if v > 0 {
				sum += v * v // 2 ordered pairs x v^2 / 2
			}
		case SquareLoss:
			sum += v * v
		case HingeLoss:
			if v > 0 {
				sum += 2 * v
			}
		case LinearLoss:
			sum -= 2 * (1 - v)
		}
	}
	return sum
}

// Lipschitz is Lemma 3.4's m/G + 1/C in ordered coordinates (m = nnz(T) =
// 2 x pairs), times 2 for the shared multiplier of a pair; the hinge loss
// has no 1/C term (section 3.6).
func (d *pairDual) Lipschitz(g float64) float64 {
	l := 2 * float64(len(d.t)) / g
	if d.loss != HingeLoss {
		l += 1 / d.c
	}
	return 2 * l
}
