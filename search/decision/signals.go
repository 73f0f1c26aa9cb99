package decision

import (
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/rerank"
	"gonum.org/v1/gonum/floats"
)

// Names are the signals of a window, in the order Measure returns them:
//   - window: the candidates with visual features (those a visual kernel ranks);
//   - tag_cohesion: the mean cosine of two candidates' tf-idf tag vectors
//     (low: the tags spread over many topics);
//   - alignment: the centred alignment of the tag kernel with the visual
//     (cosine) kernel (high: images that share tags look alike);
//   - concentration: how many times its uniform share of VisualRank's
//     score over the visual kernel the top 10 hold (high: a few images
//     gather the votes).
var Names = []string{"window", "tag_cohesion", "alignment", "concentration"}

// top is how many images concentration counts: the cut-off of P@10, on
// which the rule is fitted.
const top = 10

// Measure returns the signals of a window (Names), over the candidates
// with visual features; nil when fewer than three have them (VisualRank
// ranks none of fewer).
func Measure(cands []rerank.Candidate) []float64 {
	var vis []rerank.Candidate
	for _, c := range cands {
		if len(c.Visual) > 0 {
			vis = append(vis, c)
		}
	}
	n := len(vis)
	if n < 3 {
		return nil
	}
	x, err := rerank.Visual(vis)
	if err != nil { // features of two lengths: no visual kernel ranks this window
		return nil
	}
	defer kernelmath.Release(x.RawMatrix().Data)
	for i := range n {
		row := x.RawRowView(i)
		if norm := math.Sqrt(floats.Dot(row, row)); norm > 0 {
			for j := range row {
				row[j] /= norm
			}
		}
	}
	kv := kernelmath.Linear(x)
	kt := rerank.TextKernel(vis)
	defer kernelmath.ReleaseSym(kt)
	cohesion := 0.0
	for i := range n {
		for j := i + 1; j < n; j++ {
			cohesion += kt.At(i, j)
		}
	}
	cohesion /= float64(n * (n - 1) / 2)
	vr, s, _ := rerank.Scores(kv, vis, "uniform", "clip", rerank.DefaultDamping)
	kernelmath.Release(s.RawMatrix().Data)
	vr = slices.Clone(vr)
	slices.Sort(vr)
	m := min(top, n)
	return []float64{float64(n), cohesion, kernelmath.CenteredAlignment(kt, kv), floats.Sum(vr[n-m:]) / floats.Sum(vr) * float64(n) / float64(m)}
}
