package learners

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// echo is a learner that returns its input's target: Fit runs only on an
// input the registry checked.
type echo struct{}

func (echo) Fit(_ context.Context, in *Input) (*Output, error) {
	return &Output{Kernel: in.Target}, nil
}

func init() {
	Register(Spec{
		Name: "resolve-test", Kind: KindKernel, Needs: NeedTarget,
		Params: []Param{Int("rank", 0, 0, 100, "rank"), Float("c", 1, 0, 10, "c"), Enum("with", "target", []string{"target", "features"}, "")},
		NeedsOf: func(v Values) Needs {
			if v.String("with") == "features" {
				return NeedTarget | NeedFeatures
			}
			return NeedTarget
		},
		New: func(Values) (Learner, error) { return echo{}, nil },
	})
}

func TestResolveCanonical(t *testing.T) {
	a, err := Resolve("resolve-test", json.RawMessage(`{"c": 2.0, "rank": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Resolve("resolve-test", json.RawMessage(`{"c":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"c":2,"rank":0,"with":"target"}`; a.Params != want || b.Params != want {
		t.Errorf("canonical params %s and %s, want %s", a.Params, b.Params, want)
	}
	if !a.Given("rank") || b.Given("rank") || !b.Given("c") {
		t.Errorf("Given: rank %v/%v, c %v", a.Given("rank"), b.Given("rank"), b.Given("c"))
	}
	if _, err := Resolve("resolve-test", json.RawMessage(`{"rank": -1}`)); err == nil {
		t.Error("rank -1 accepted")
	}
	if _, err := Resolve("no-such", nil); !errors.Is(err, ErrUnknownLearner) {
		t.Errorf("unknown name: %v", err)
	}
}

// LowRank replaces a rank above m by m, without decoding JSON again, and
// the cost follows the rank: n^2 m steps below full rank's n^3 solves.
func TestResolveLowRankAndCost(t *testing.T) {
	full, err := Resolve("resolve-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rank, ok := full.Rank(); rank != 0 || !ok || !full.RankAbove(30) {
		t.Fatalf("rank %d %v, above 30 %v", rank, ok, full.RankAbove(30))
	}
	low, err := full.LowRank(30)
	if err != nil {
		t.Fatal(err)
	}
	if rank, _ := low.Rank(); rank != 30 || low.Params != `{"c":1,"rank":30,"with":"target"}` || !low.Given("rank") {
		t.Errorf("low-rank form: rank %d, params %s", rank, low.Params)
	}
	if same, _ := low.LowRank(40); same != low {
		t.Error("LowRank(40) of rank 30 is not the same value")
	}
	if got, want := full.Cost(200, 10), 200.0*200*200*eigenFlops*fullRankSolves; got != want {
		t.Errorf("full-rank cost %g, want %g", got, want)
	}
	if got, want := low.Cost(200, 10), 200.0*200*30*lowRankSteps; got != want {
		t.Errorf("low-rank cost %g, want %g", got, want)
	}
	if _, err := full.With("rank", 101); err == nil {
		t.Error("With accepted rank 101")
	}
}

// Fit checks the input against the needs of the parameters given.
func TestResolvedFitChecksNeeds(t *testing.T) {
	k := identity(3)
	plain, _ := Resolve("resolve-test", nil)
	if out, err := plain.Fit(context.Background(), &Input{Target: k}); err != nil || out.Kernel != k {
		t.Fatalf("valid input: %v", err)
	}
	if _, err := plain.Fit(context.Background(), &Input{Features: mat.NewDense(3, 1, nil)}); !errors.Is(err, ErrInput) {
		t.Errorf("missing target: %v", err)
	}
	withFeatures, _ := Resolve("resolve-test", json.RawMessage(`{"with":"features"}`))
	if withFeatures.Needs != NeedTarget|NeedFeatures {
		t.Errorf("needs %v", withFeatures.Needs.Names())
	}
	if _, err := withFeatures.Fit(context.Background(), &Input{Target: k}); !errors.Is(err, ErrInput) {
		t.Errorf("missing features: %v", err)
	}
}
