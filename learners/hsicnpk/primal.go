package hsicnpk

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"
)

// primal solves eq. 6.2 directly, for the degenerate case of spec A.4 where
// the optimum lies strictly inside the budget: there A_+ vanishes at the
// optimal alpha, K(alpha) = sqrt(B) A_+ / ||A_+|| has no limit, and the dual
// iteration cannot close the gap. It runs accelerated projected gradient
// (FISTA with backtracking and the gradient restart of O'Donoghue and Candes)
// on
//
//	f(P) = -tr(M~ P) + C/2 sum_e max(0, w_e^T P w_e - d_e^2)^2
//
// over {P PSD, ||P||_F <= sqrt(B)}, whose projection is the PSD projection
// followed by the radial one (exact for a cone intersected with a ball
// centred at 0). grad f = -M~ + V^T L_beta V with beta = C max(0, viol); its
// Lipschitz constant C lambda_max(G), G(P) = V^T L_{w^T P w} V, is estimated by
// power iteration to start the backtracking. The start is the best primal
// point of the dual phase. The certificate is the same duality gap, with the
// dual evaluated at the KKT multipliers alpha = C max(0, viol(P)), which tend
// to the optimal ones as P tends to the optimum.
func (s *solver) primal(ctx context.Context) (bool, error) {
	if err := s.factorised(); err != nil {
		return false, err
	}
	pr := s.pr
	q := pr.q
	ne := len(pr.pairs)

	cur := make([]float64, q*q)  // P_k
	prev := make([]float64, q*q) // P_{k-1}
	ext := make([]float64, q*q)  // extrapolated point
	grad := make([]float64, q*q)
	trial := make([]float64, q*q)
	t := make([]float64, ne)
	beta := make([]float64, ne)
	var u mat.Dense
	var z mat.Dense
	var cw []float64 // weights of the last projection's eigenvectors

	// distances fills t with w_e^T P w_e for the q x q matrix p.
	distances := func(p []float64) {
		if pr.v == nil {
			for e, pair := range pr.pairs {
				i, j := pair.I, pair.J
				t[e] = p[i*q+i] + p[j*q+j] - 2*p[i*q+j]
			}
			return
		}
		u.Reset()
		u.Mul(pr.v, mat.NewDense(q, q, p))
		ur, vr := u.RawMatrix(), pr.v.RawMatrix()
		for e, pair := range pr.pairs {
			ui := ur.Data[pair.I*ur.Stride : pair.I*ur.Stride+q]
			uj := ur.Data[pair.J*ur.Stride : pair.J*ur.Stride+q]
			vi := vr.Data[pair.I*vr.Stride : pair.I*vr.Stride+q]
			vj := vr.Data[pair.J*vr.Stride : pair.J*vr.Stride+q]
			v := 0.0
			for c := range ui {
				v += (ui[c] - uj[c]) * (vi[c] - vj[c])
			}
			t[e] = v
		}
	}
	// objective returns f(p), leaving t = distances of p.
	objective := func(p []float64) float64 {
		tr := 0.0
		for i, m := range pr.m {
			tr += m * p[i]
		}
		distances(p)
		pen := 0.0
		for e, te := range t {
			if v := te - pr.dd[e]; v > 0 {
				pen += v * v
			}
		}
		return -tr + pr.c/2*pen
	}
	// project writes the projection of src onto {PSD, ||.|| <= sqrt(B)}
	// into dst, keeping its eigenvectors in z and weights in cw.
	project := func(dst, src []float64) error {
		if err := pr.pe.FactorizeDense(q, src); err != nil {
			return err
		}
		s.evals++
		vals := pr.pe.Values(pr.vals)
		lo := q
		top := math.Max(math.Abs(vals[0]), math.Abs(vals[q-1]))
		for lo > 0 && vals[lo-1] > 100*0x1p-52*top {
			lo--
		}
		for i := range dst {
			dst[i] = 0
		}
		cw = cw[:0]
		if lo == q {
			return nil
		}
		z.Reset()
		if err := pr.pe.VectorsTo(&z, lo, q); err != nil {
			return err
		}
		nrm := 0.0
		for _, l := range vals[lo:] {
			nrm += l * l
		}
		shrink := math.Min(1, pr.sqrtB/math.Sqrt(nrm))
		zr := z.RawMatrix()
		for c, l := range vals[lo:] {
			w := l * shrink
			cw = append(cw, w)
			for i := 0; i < q; i++ {
				zi := w * zr.Data[i*zr.Stride+c]
				if zi == 0 {
					continue
				}
				row := dst[i*q : i*q+q]
				for j := range row {
					row[j] += zi * zr.Data[j*zr.Stride+c]
				}
			}
		}
		return nil
	}

	// Lipschitz estimate: power iteration on G, from a fixed start.
	for i := 0; i < q; i++ {
		for j := 0; j < q; j++ {
			trial[i*q+j] = 1 / float64(1+(i+2*j)%7)
		}
	}
	lam := 0.0
	for it := 0; it < 30; it++ {
		distances(trial)
		for i := range grad {
			grad[i] = 0
		}
		pr.addLaplacian(grad, 1, t)
		nrm := 0.0
		for _, x := range grad {
			nrm += x * x
		}
		nrm = math.Sqrt(nrm)
		if nrm == 0 {
			break
		}
		old := 0.0
		for _, x := range trial {
			old += x * x
		}
		lam = nrm / math.Sqrt(old)
		for i := range trial {
			trial[i] = grad[i] / nrm
		}
	}
	lip := pr.c * math.Max(lam, 1e-12)

	// Warm start: the best primal point so far, in q-space.
	if s.best.y != nil {
		var zq mat.Dense
		if pr.v != nil {
			zq.Mul(pr.v.T(), s.best.y)
		} else {
			zq.CloneFrom(s.best.y)
		}
		zr := zq.RawMatrix()
		for c, w := range s.best.w {
			for i := 0; i < q; i++ {
				zi := w * zr.Data[i*zr.Stride+c]
				for j := 0; j < q; j++ {
					cur[i*q+j] += zi * zr.Data[j*zr.Stride+c]
				}
			}
		}
	}
	copy(prev, cur)
	copy(ext, cur)

	theta := 1.0
	fCur := objective(cur)
	for k := 0; k < s.cfg.maxIter; k++ {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		s.iter++
		// Value and gradient at the extrapolated point.
		fExt := objective(ext)
		for e, te := range t {
			beta[e] = pr.c * math.Max(0, te-pr.dd[e])
		}
		for i := range grad {
			grad[i] = -pr.m[i]
		}
		pr.addLaplacian(grad, 1, beta)
		// Backtracking on the descent lemma, allowing the step to grow.
		lip *= 0.8
		var fNew float64
		for ls := 0; ; ls++ {
			for i := range trial {
				trial[i] = ext[i] - grad[i]/lip
			}
			if err := project(trial, trial); err != nil {
				return false, err
			}
			fNew = objective(trial)
			lin, sq := 0.0, 0.0
			for i := range trial {
				d := trial[i] - ext[i]
				lin += grad[i] * d
				sq += d * d
			}
			if fNew <= fExt+lin+lip/2*sq+1e-12*math.Abs(fExt) || ls == 40 {
				break
			}
			lip *= 2
		}
		copy(prev, cur)
		copy(cur, trial)
		if fNew < s.bestP {
			s.bestP, s.bestS = fNew, 1
			if len(cw) == 0 {
				s.best.set(nil, nil)
			} else if pr.v != nil {
				var y mat.Dense
				y.Mul(pr.v, &z)
				s.best.set(&y, cw)
			} else {
				s.best.set(&z, cw)
			}
		}
		// Certificate: the dual at the KKT multipliers of the iterate
		// (t holds the distances of cur after objective).
		if k%3 == 2 || k == s.cfg.maxIter-1 {
			for e, te := range t {
				beta[e] = pr.c * math.Max(0, te-pr.dd[e])
			}
			d, err := pr.value(beta)
			if err != nil {
				return false, err
			}
			s.evals++
			if d > s.bestD {
				s.bestD = d
				copy(s.alpha, beta)
			}
		}
		s.record(step{Primal: fNew, Dual: s.bestD, Scale: 1, Phase: "primal"})
		if s.gap() <= s.cfg.tol {
			return true, nil
		}
		// FISTA momentum, restarted when the objective goes up or the
		// momentum points against the step.
		restart := fNew > fCur
		if !restart {
			dot := 0.0
			for i := range cur {
				dot += (ext[i] - cur[i]) * (cur[i] - prev[i])
			}
			restart = dot > 0
		}
		if restart {
			theta = 1
		}
		thNext := (1 + math.Sqrt(1+4*theta*theta)) / 2
		mom := (theta - 1) / thNext
		for i := range ext {
			ext[i] = cur[i] + mom*(cur[i]-prev[i])
		}
		theta = thNext
		fCur = fNew
	}
	return false, nil
}
