package learners

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Factory builds a learner from validated parameter values.
type Factory func(v Values) (Learner, error)

// Spec describes a registered learner: what it is, what it needs, its
// parameters with their defaults and ranges, and how to build it.
type Spec struct {
	Name   string  `json:"name"`
	Kind   Kind    `json:"kind"`
	Doc    string  `json:"doc"`
	Needs  Needs   `json:"-"`
	Params []Param `json:"params"`
	// Simplex says a KindWeights learner's weights lie on the simplex
	// (non-negative, summing to 1); the contract suite checks it.
	Simplex bool `json:"simplex,omitempty"`
	// Fixed says nothing is learned: the output is a fixed function of the
	// input (the re-rank strategies raw, text, linear, poly, rbf and
	// intersection), so a cache need not keep it.
	Fixed bool `json:"fixed,omitempty"`
	// Aliases are other names the plug-in answers to (npk for hsicnpk);
	// Lookup and New accept them, and the spec keeps its own Name.
	Aliases []string `json:"aliases,omitempty"`
	New     Factory  `json:"-"`
	// NeedsOf, when set, gives the inputs a fit requires at given
	// parameter values, for a plug-in whose needs depend on them; Needs
	// are then those of the defaults.
	NeedsOf func(Values) Needs `json:"-"`
}

// MarshalJSON lists the needs by name.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	return json.Marshal(struct {
		plain
		Needs []string `json:"needs"`
	}{plain(s), s.Needs.Names()})
}

var (
	regMu    sync.RWMutex
	registry = map[string]Spec{}
	aliases  = map[string]string{} // alias -> name
)

// Register adds a learner. It panics on an empty or duplicate name, a missing
// factory or an invalid parameter default, as database/sql does: these are
// programming errors found at start-up.
func Register(s Spec) {
	regMu.Lock()
	defer regMu.Unlock()
	if s.Name == "" || s.New == nil {
		panic("learners: Register needs a name and a factory")
	}
	for _, name := range append([]string{s.Name}, s.Aliases...) {
		_, dup := registry[name]
		_, dupAlias := aliases[name]
		if dup || dupAlias {
			panic("learners: Register called twice for " + name)
		}
	}
	if _, _, err := parseParams(s, nil); err != nil {
		panic(fmt.Sprintf("learners: defaults of %s do not validate: %v", s.Name, err))
	}
	registry[s.Name] = s
	for _, a := range s.Aliases {
		aliases[a] = s.Name
	}
}

// Lookup returns the spec registered under name or one of its aliases.
func Lookup(name string) (Spec, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	if canonical, ok := aliases[name]; ok {
		name = canonical
	}
	s, ok := registry[name]
	return s, ok
}

// Specs returns every registered learner, sorted by name.
func Specs() []Spec {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]Spec, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrUnknownLearner is wrapped by New when no learner has the given name.
var ErrUnknownLearner = fmt.Errorf("unknown learner")

// New builds the learner registered under name from JSON parameters (nil or
// empty for all defaults): Resolve's learner, which checks its input
// against the plug-in's needs before every fit. Unknown names, unknown
// parameters and invalid values are errors that name the culprit.
func New(name string, params json.RawMessage) (Learner, Spec, error) {
	r, err := Resolve(name, params)
	if err != nil {
		s, _ := Lookup(name)
		return nil, s, err
	}
	return r, r.Spec, nil
}
