package learners

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

type nopLearner struct{}

func (nopLearner) Fit(context.Context, *Input) (*Output, error) { return &Output{}, nil }

func testSpec(name string) Spec {
	return Spec{
		Name: name, Kind: KindKernel, Doc: "test",
		Params: []Param{
			Positive("C", 1, "penalty"),
			Int("k", 5, 1, 100, "neighbours"),
			Enum("loss", "hinge", []string{"hinge", "square"}, "loss"),
			Bool("fast", false, "speed"),
			Float("frac", 0.5, 0, 1, "fraction"),
		},
		New: func(Values) (Learner, error) { return nopLearner{}, nil },
	}
}

func TestParseParamsDefaultsAndValues(t *testing.T) {
	s := testSpec("t")
	v, err := ParseParams(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Float("C") != 1 || v.Int("k") != 5 || v.String("loss") != "hinge" || v.Bool("fast") || v.Float("frac") != 0.5 {
		t.Fatalf("defaults wrong: %v", v)
	}
	v, err = ParseParams(s, json.RawMessage(`{"C": 2.5, "k": 7, "loss": "square", "fast": true, "frac": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if v.Float("C") != 2.5 || v.Int("k") != 7 || v.String("loss") != "square" || !v.Bool("fast") || v.Float("frac") != 1 {
		t.Fatalf("values wrong: %v", v)
	}
}

func TestParseParamsErrorsNameTheParameter(t *testing.T) {
	s := testSpec("t")
	cases := map[string]string{
		`{"gamma": 1}`:     "gamma",
		`{"C": 0}`:         "C",
		`{"C": -1}`:        "C",
		`{"C": "big"}`:     "C",
		`{"k": 2.5}`:       "k",
		`{"k": 0}`:         "k",
		`{"k": 101}`:       "k",
		`{"loss": "log"}`:  "loss",
		`{"fast": 1}`:      "fast",
		`{"frac": 1.0001}`: "frac",
		`[1, 2]`:           "",
		`{"C": 1`:          "",
	}
	for raw, param := range cases {
		_, err := ParseParams(s, json.RawMessage(raw))
		var pe *ParamError
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a ParamError", raw, err)
			continue
		}
		if pe.Param != param {
			t.Errorf("%s: error names %q, want %q (%v)", raw, pe.Param, param, err)
		}
	}
}

func TestRegistry(t *testing.T) {
	spec := testSpec("registry-test")
	spec.Aliases = []string{"registry-alias"}
	Register(spec)
	defer func() {
		regMu.Lock()
		delete(registry, "registry-test")
		delete(aliases, "registry-alias")
		regMu.Unlock()
	}()
	if _, ok := Lookup("registry-test"); !ok {
		t.Fatal("registered spec not found")
	}
	if s, ok := Lookup("registry-alias"); !ok || s.Name != "registry-test" {
		t.Fatalf("alias: found %v, spec %q; want the spec named registry-test", ok, s.Name)
	}
	if _, s, err := New("registry-alias", nil); err != nil || s.Name != "registry-test" {
		t.Fatalf("New by alias: %v, spec %q", err, s.Name)
	}
	if _, _, err := New("registry-test", json.RawMessage(`{"k": 3}`)); err != nil {
		t.Fatal(err)
	}
	_, _, err := New("no-such-learner", nil)
	if !errors.Is(err, ErrUnknownLearner) || !strings.Contains(err.Error(), "registry-test") {
		t.Fatalf("unknown learner error = %v, want ErrUnknownLearner listing the registered names", err)
	}
	for name, s := range map[string]Spec{
		"duplicate":              testSpec("registry-test"),
		"name taken by an alias": testSpec("registry-alias"),
		"alias taken by a name":  {Name: "w", New: testSpec("w").New, Aliases: []string{"registry-test"}},
		"empty name":             testSpec(""),
		"no factory":             {Name: "x"},
		"bad default":            {Name: "y", New: testSpec("y").New, Params: []Param{Positive("C", 0, "")}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			Register(s)
		}()
	}
	b, err := json.Marshal(Spec{Name: "z", Kind: KindWeights, Needs: NeedKernels | NeedLabels, Params: []Param{Float("a", 1, 0, math.Inf(1), "")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"needs":["kernels","labels"]`) || !strings.Contains(string(b), `"min":0`) || !strings.Contains(string(b), `"max":1000000`) {
		t.Fatalf("spec JSON = %s", b)
	}
}

// An open end of a declared range is Limit: a huge value is refused with the
// range, before a solver overflows on it (C = 1e200 did).
func TestOpenRangesAreBounded(t *testing.T) {
	s := Spec{Name: "t", Params: []Param{Positive("C", 1, ""), Float("g", 0, math.Inf(-1), math.Inf(1), "")}}
	for raw, want := range map[string]string{
		`{"C": 1e200}`: `parameter "C": must be in (0, 1e+06], got 1e+200`,
		`{"C": 0}`:     `parameter "C": must be in (0, 1e+06], got 0`,
		`{"g": -1e7}`:  `parameter "g": must be in [-1e+06, 1e+06], got -1e+07`,
		`{"C": 1e300}`: `got 1e+300`,
		`{"g": 1e309}`: `parameter "g": want a number`,
	} {
		_, err := ParseParams(s, json.RawMessage(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", raw, err, want)
		}
	}
	if _, err := ParseParams(s, json.RawMessage(`{"C": 1e6, "g": -1e6}`)); err != nil {
		t.Errorf("the ends of the range: %v", err)
	}
}
