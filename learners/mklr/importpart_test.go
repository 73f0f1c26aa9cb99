package mklr

import (
	"testing"

	"github.com/kernelrank/kernelrank/learners"
)

// The import part of f is the pair kernel summed over the imports, from
// the feature map, for every pair kernel, and f is it plus the intercept
// and the kernel terms; a user with a dense kernel row has features.
func TestImportPartMatchesFeatureMap(t *testing.T) {
	c := newCommunity(t, 40, 4, 5, 3)
	for _, o := range configs(c.base) {
		_, m := run(t, c.k, c.pos, c.neg, o)
		for i := range 40 {
			if m.ZeroFeatures(i) {
				t.Fatalf("%s: user %d has no features", name(o), i)
			}
			for j := range 40 {
				want := 0.0
				for s, imp := range m.Imports() {
					want += m.Alpha()[s] * c.featurePair(m.Pair(), learners.Pair{I: i, J: j}, imp)
				}
				near(t, name(o)+": import part", m.ImportPart(i, j), want, 1e-9)
				near(t, name(o)+": f", m.Score(i, j), c.explicitScore(m, i, j), 1e-9)
			}
		}
	}
}

// ImportSum is ImportPart summed over every user, for every pair kernel
// (configs covers all three), after training and after FromState.
func TestImportSumIsTheRowSum(t *testing.T) {
	c := newCommunity(t, 40, 4, 5, 3)
	for _, o := range configs(c.base) {
		_, m := run(t, c.k, c.pos, c.neg, o)
		loaded, err := FromState(m.State(), c.k, o.Base)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Imports()) == 0 {
			t.Fatalf("%s: no imports: the sum is not exercised", name(o))
		}
		for i := range 40 {
			want := 0.0
			for j := range 40 {
				want += m.ImportPart(i, j)
			}
			near(t, name(o)+": import sum", m.ImportSum(i), want, 1e-9)
			near(t, name(o)+": loaded import sum", loaded.ImportSum(i), want, 1e-9)
		}
	}
}
