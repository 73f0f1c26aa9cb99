package fixed

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// Each fixed kernel of two points x1 = (1, 2), x2 = (3, -1), by hand.
func TestKernelsByHand(t *testing.T) {
	x := mat.NewDense(2, 2, []float64{1, 2, 3, -1})
	target := mat.NewSymDense(2, []float64{1, 0.5, 0.5, 2})
	for _, c := range []struct {
		name, params string
		want         []float64 // K11, K12, K22
	}{
		{Linear, "", []float64{5, 1, 10}},
		{Poly, "", []float64{36, 4, 121}},                        // (1 + x.y)^2
		{Poly, `{"degree": 3, "c": 0}`, []float64{125, 1, 1000}}, // (x.y)^3
		{RBF, "", []float64{1, math.Exp(-1), 1}},                 // ||x1 - x2||^2 = 13, the mean distance
		{RBF, `{"scale": 2}`, []float64{1, math.Exp(-0.5), 1}},
		// The second column is shifted by its minimum -1: (1, 3), (3, 0),
		// each row then scaled to sum 1: (1/4, 3/4), (1, 0).
		{Intersection, "", []float64{1, 0.25, 1}},
		{Text, "", []float64{1, 0.5, 2}},
	} {
		l, _, err := learners.New(c.name, json.RawMessage(c.params))
		if err != nil {
			t.Fatal(err)
		}
		out, err := l.Fit(context.Background(), &learners.Input{Features: x, Target: target})
		if err != nil {
			t.Fatalf("%s %s: %v", c.name, c.params, err)
		}
		k := out.Kernel
		for i, got := range []float64{k.At(0, 0), k.At(0, 1), k.At(1, 1)} {
			if math.Abs(got-c.want[i]) > 1e-12 {
				t.Errorf("%s %s: entry %d = %v, want %v", c.name, c.params, i, got, c.want[i])
			}
		}
	}
	// text copies the target rather than hand it back, so that a caller
	// changing the kernel cannot change its input.
	l, _, _ := learners.New(Text, nil)
	out, _ := l.Fit(context.Background(), &learners.Input{Target: target})
	out.Kernel.SetSym(0, 0, 7)
	if target.At(0, 0) != 1 {
		t.Fatal("text returned its input target")
	}
}

// raw outputs nothing, and every fixed plug-in says it is fixed.
func TestRawAndFixed(t *testing.T) {
	l, spec, err := learners.New(Raw, nil)
	if err != nil || spec.Kind != learners.KindOrder {
		t.Fatalf("raw: %v, kind %s", err, spec.Kind)
	}
	out, err := l.Fit(context.Background(), &learners.Input{Features: mat.NewDense(3, 1, []float64{1, 2, 3})})
	if err != nil || out.Kernel != nil {
		t.Fatalf("raw: %v, kernel %v", err, out.Kernel)
	}
	// Their parameter errors call them strategies, not learners.
	if _, _, err := learners.New(Poly, json.RawMessage(`{"degree": 0}`)); err == nil ||
		!strings.HasPrefix(err.Error(), `strategy poly: parameter "degree": must be in [1, 10]`) {
		t.Errorf("poly with degree 0: %v", err)
	}
	for _, name := range []string{Raw, Text, Linear, Poly, RBF, Intersection} {
		if s, ok := learners.Lookup(name); !ok || !s.Fixed {
			t.Errorf("%s: registered %v, fixed %v", name, ok, s.Fixed)
		}
	}
}
