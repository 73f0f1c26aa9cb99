package mklr

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
