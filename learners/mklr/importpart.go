package mklr

import "gonum.org/v1/gonum/floats"

// ImportPart returns sum_{s in S} alpha_s P((i, j), s), the part of
// f(i, j) that the imports give (f without the intercept and the kernel
// terms), in O(|S|).
func (m *Model) ImportPart(i, j int) float64 {
	if m.feat == nil {
		return 0
	}
	ri, rj := m.feat.RawRowView(i), m.feat.RawRowView(j)
	f := 0.0
	for s, a := range m.alpha {
		switch m.pair {
		case PairTensor:
			f += a * (ri[2*s]*rj[2*s+1] + ri[2*s+1]*rj[2*s])
		case PairDifference:
			f += a * (ri[s] - rj[s])
		default:
			d := ri[s] - rj[s]
			f += a * d * d
		}
	}
	return f
}

// ImportSum returns the sum over every user j (j = i included) of
// ImportPart(i, j), in O(|S|): the import part is linear (PairTensor,
// PairDifference) or quadratic (PairSquared) in j's feature row, so it
// needs only the column sums of the rows (and the sum of the per-user
// parts) kept with the model.
func (m *Model) ImportSum(i int) float64 {
	if m.feat == nil {
		return 0
	}
	ri, n := m.feat.RawRowView(i), float64(m.n)
	switch m.pair {
	case PairTensor:
		f := 0.0
		for s, a := range m.alpha {
			f += a * (ri[2*s]*m.featSum[2*s+1] + ri[2*s+1]*m.featSum[2*s])
		}
		return f
	case PairDifference:
		// sum_j sum_s alpha_s (e_s(i) - e_s(j)) = n q_i - sum_j q_j.
		return n*m.quad[i] - m.quadSum
	}
	// sum_j sum_s alpha_s (e_s(i) - e_s(j))^2
	//   = n q_i + sum_j q_j - 2 sum_s alpha_s e_s(i) sum_j e_s(j).
	cross := 0.0
	for s, a := range m.alpha {
		cross += a * ri[s] * m.featSum[s]
	}
	return n*m.quad[i] + m.quadSum - 2*cross
}

// sumFeatures sets featSum and quadSum from feat and quad.
func (m *Model) sumFeatures() {
	r, c := m.feat.Dims()
	m.featSum = make([]float64, c)
	for u := range r {
		floats.Add(m.featSum, m.feat.RawRowView(u))
	}
	m.quadSum = floats.Sum(m.quad)
}

// ImportBase returns ImportPart(i, j) for every user j whose feature row
// is zero (ZeroFeatures): 0 for PairTensor, the per-user part of i
// otherwise.
func (m *Model) ImportBase(i int) float64 { return m.quad[i] }

// ZeroFeatures says whether user j's feature row (its kernel entries
// with the imports' users) is zero: j is far from every import. For
// PairTensor, ImportPart(j, v) is then 0 for every v.
func (m *Model) ZeroFeatures(j int) bool {
	if m.feat == nil {
		return true
	}
	for _, x := range m.feat.RawRowView(j) {
		if x != 0 {
			return false
		}
	}
	return true
}
