package twolayer

import (
	"context"
	"math"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// columnGeneration is Protocol 3: B1 on the current antecedent layer, then
// the pricing problem; a Gaussian is added until the stopping test holds.
// It returns the last point, the generated Gaussians (weights unset), the
// accepted gradient steps over all rounds and whether it converged: the
// last B1 did and the test, not max_kernels, ended the generation.
func (p *problem) columnGeneration(ctx context.Context, x *mat.Dense) (*point, []Generated, int, bool, error) {
	dist := kernelmath.SqDistances(x)
	pr := newPricing(p, dist)
	mu := p.initial(len(p.ks.Kernels))
	var (
		gens  []Generated
		iters int
	)
	for round := 0; ; round++ {
		pt, n, ok, err := p.descend(ctx, mu, round)
		if err != nil {
			return nil, nil, 0, false, err
		}
		iters += n
		// The stopping test (deviation: the thesis' literal test never
		// fires; see the package documentation), a repeated theta
		// (deviation: theta_tol 1e-2, the spec 1e-3) or the cap.
		theta, stop := pr.solve(pt)
		for _, g := range gens {
			stop = stop || math.Abs(theta-g.Theta) <= p.cfg.thetaTol*g.Theta
		}
		if stop || len(gens) == p.cfg.maxKernels {
			return pt, gens, iters, ok && stop, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, false, err
		}
		k := mat.NewSymDense(dist.SymmetricDim(), nil)
		k.CopySym(dist)
		raw := k.RawSymmetric()
		for a := range raw.N {
			row := raw.Data[a*raw.Stride+a : a*raw.Stride+raw.N]
			for b, d := range row {
				row[b] = math.Exp(-theta * d)
			}
		}
		g := Generated{Theta: theta, Scale: pr.scale}
		gens = append(gens, g)
		p.ks.Kernels = append(p.ks.Kernels, k)
		p.ks.Scales = append(p.ks.Scales, g.Scale)
		p.lab.Add(k, g.Scale)
		if p.cfg.reinit {
			mu = p.initial(len(p.ks.Kernels))
		} else {
			mu = append(pt.mu, 0)
		}
	}
}

// pricing is the new-kernel subproblem of B2 (thesis eq. 4.6, 4.7) at the
// SVM duals b of the current point, for the Gaussian
// u(theta) = scale * exp(-theta D) over the labelled points:
//
//	quadratic:  J(theta) = 1/2 sum_ab W_ab exp(u_ab),   W = sum_c b_c b_c'
//	derivative: J(theta) = 1/2 sum_ab W_ab u_ab,        W = sum_c b_c b_c' o K2
//
// with dJ/dlog(theta) = -1/2 sum_ab W_ab phi'(u_ab) u_ab theta D_ab (eq. 4.7
// with its sign fixed, spec §4.3), summed over the support vectors only.
type pricing struct {
	p     *problem
	dist  *mat.SymDense // squared distances over all input points
	scale float64       // of the new Gaussian: 1/trace over the labelled points, or 1
	grid  []float64     // log theta of the starting grid
	// the pair terms of the current point, upper triangle with the
	// off-diagonal doubled
	w, d []float64
}

func newPricing(p *problem, dist *mat.SymDense) *pricing {
	pr := &pricing{p: p, dist: dist, scale: 1}
	if p.cfg.normalizeNew {
		pr.scale = 1 / float64(len(p.tasks.Points)) // a Gaussian's diagonal is 1
	}
	mean, pairs := 0.0, 0
	for a, i := range p.tasks.Points {
		for _, j := range p.tasks.Points[a+1:] {
			mean += dist.At(i, j)
			pairs++
		}
	}
	if pairs > 0 && mean > 0 {
		mean /= float64(pairs)
	} else {
		mean = 1
	}
	for e := -12; e <= 12; e++ {
		pr.grid = append(pr.grid, math.Log(math.Ldexp(1, e)/mean))
	}
	return pr
}

// solve returns the best theta found and whether the stopping test holds
// for it.
func (pr *pricing) solve(pt *point) (float64, bool) {
	var h *mat.SymDense
	if pr.p.cfg.derivative {
		h = pt.k2
	}
	w := pt.duals.Outer(h)
	sv := make([]int, len(pt.duals.Support)) // input indices of the support vectors
	for a, i := range pt.duals.Support {
		sv[a] = pr.p.tasks.Points[i]
	}
	pr.w, pr.d = pr.w[:0], pr.d[:0]
	for a, i := range sv {
		for b := a; b < len(sv); b++ {
			f := 2.0
			if b == a {
				f = 1
			}
			pr.w = append(pr.w, f*w.At(a, b))
			pr.d = append(pr.d, pr.dist.At(i, sv[b]))
		}
	}
	// Deviation (Protocol 3 starts from a random theta): from the best
	// point of the log grid.
	z, best := pr.grid[0], math.Inf(-1)
	for _, g := range pr.grid {
		if v, _ := pr.value(g); v > best {
			z, best = g, v
		}
	}
	z, best = pr.ascend(z, best)
	if pr.p.cfg.derivative {
		return math.Exp(z), best-1 <= 0
	}
	// quadratic: compare with 1/2 b'K2 b = 1/2 <W, K2>.
	cur := 0.0
	off := 0
	for a := range sv {
		for b := a; b < len(sv); b++ {
			cur += 0.5 * pr.w[off] * pt.k2.At(pt.duals.Support[a], pt.duals.Support[b])
			off++
		}
	}
	return math.Exp(z), best <= cur
}

// value returns J and dJ/dz at z = log theta.
func (pr *pricing) value(z float64) (float64, float64) {
	theta := math.Exp(z)
	j, dj := 0.0, 0.0
	for k, w := range pr.w {
		u := pr.scale * math.Exp(-theta*pr.d[k])
		phi, dphi := u, 1.0
		if !pr.p.cfg.derivative {
			phi = math.Exp(u)
			dphi = phi
		}
		j += w * phi
		dj -= w * dphi * u * theta * pr.d[k]
	}
	return 0.5 * j, 0.5 * dj
}

// ascend is gradient ascent on z = log theta from (z, J(z)) with Armijo
// backtracking (sigma 1e-4), the trial step doubling after a success,
// while J improves by more than 1e-12 relative, at most 100 steps.
func (pr *pricing) ascend(z, j float64) (float64, float64) {
	eta := 1.0
	for range 100 {
		_, g := pr.value(z)
		improved := false
		for range 40 {
			nz := z + eta*g
			if nj, _ := pr.value(nz); nj >= j+1e-4*eta*g*g && nj > j {
				improved = nj-j > 1e-12*math.Abs(j)
				z, j, eta = nz, nj, 2*eta
				break
			}
			eta /= 2
		}
		if !improved {
			break
		}
	}
	return z, j
}
