package recommend

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
)

// The typical candidate from the row sums kept with the model equals the
// one from u's rows, to 1e-9 relative, for every user of the demo network
// and of a generated network trained with each pair kernel (with and
// without the combined kernel's term), and so do the explanations built
// on it; a user with no candidate gets the rows' zeros.
func TestTypicalBySumsIsByRows(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on a generated network four times")
	}
	gen, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{Users: 200, Groups: 12})
	if err != nil {
		t.Fatal(err)
	}
	demoDS, large := written(t, gen.WriteDir), generatedData(t, 1500)
	for _, c := range []struct {
		name string
		mklr string
	}{
		{"demo", ""},
		{"generated/tensor", `{"pair":"tensor","max_import":12}`},
		{"generated/squared+kernel", `{"pair":"squared","kernel_term":true,"max_import":12}`},
		{"generated/difference", `{"pair":"difference","max_import":12}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds, opts := large, Options{MKLR: json.RawMessage(c.mklr)}
			if c.mklr == "" {
				ds, opts.MKLR = demoDS, nil
			}
			m := trainT(t, ds, opts)
			if len(m.strength.Imports()) == 0 {
				t.Fatal("no imports: the import part's sums are not exercised")
			}
			for u := range ds.N() {
				src := m.pairsOf(u)
				got, want := m.typicalBySums(src), m.typicalByRows(src)
				for k := range m.kernels {
					closeTo(t, u, m.kernels[k].Name, got.kernel[k], want.kernel[k])
				}
				closeTo(t, u, "f", got.f, want.f)
				if u%50 != 0 {
					continue
				}
				// The answer as served against the one from the rows.
				rows := src
				rows.own = false
				top := func() ([]int, []float64) { return m.topFriends(u, 5) }
				a, b := m.friendsAnswer("", false, src, top), m.friendsAnswer("", false, rows, top)
				for r := range a.Items {
					x, y := a.Items[r], b.Items[r]
					closeTo(t, u, "TypicalLogOdds", x.TypicalLogOdds, y.TypicalLogOdds)
					closeTo(t, u, "PairsRelative", x.PairsRelative, y.PairsRelative)
					for i := range x.Contributions {
						if x.Contributions[i].Kernel == y.Contributions[i].Kernel {
							closeTo(t, u, "Relative", x.Contributions[i].Relative, y.Contributions[i].Relative)
						}
					}
				}
			}
			// Friends with everyone else: no candidates.
			src := m.pairsOf(0)
			src.friends = make([]int, 0, ds.N()-1)
			for v := 1; v < ds.N(); v++ {
				src.friends = append(src.friends, v)
			}
			got, want := m.typicalBySums(src), m.typicalByRows(src)
			if got.f != 0 || want.f != 0 || got.kernel[0] != want.kernel[0] {
				t.Errorf("no candidates: f %v by sums, %v by rows", got.f, want.f)
			}
		})
	}
}

func closeTo(t *testing.T, u int, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Fatalf("user %d, %s: %.17g from the sums, %.17g from the rows", u, what, got, want)
	}
}
