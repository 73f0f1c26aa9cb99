package learners

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// ParamType is the JSON type of a learner parameter.
type ParamType string

// Parameter types.
const (
	TypeFloat  ParamType = "float"
	TypeInt    ParamType = "int"
	TypeString ParamType = "string"
	TypeBool   ParamType = "bool"
)

// Param declares one learner parameter: its type, default, valid range (for
// numbers) or allowed values (for strings), and what it does.
type Param struct {
	Name         string    `json:"name"`
	Type         ParamType `json:"type"`
	Default      any       `json:"default"`
	Min          *float64  `json:"min,omitempty"`
	Max          *float64  `json:"max,omitempty"`
	MinExclusive bool      `json:"min_exclusive,omitempty"`
	Enum         []string  `json:"enum,omitempty"`
	Doc          string    `json:"doc"`
}

// Float declares a float parameter in [min, max]; an end given as math.Inf
// is ±Limit.
func Float(name string, def, min, max float64, doc string) Param {
	return Param{Name: name, Type: TypeFloat, Default: def, Min: bound(min), Max: bound(max), Doc: doc}
}

// Positive declares a float parameter in (0, Limit].
func Positive(name string, def float64, doc string) Param {
	p := Float(name, def, 0, math.Inf(1), doc)
	p.MinExclusive = true
	return p
}

// Int declares an integer parameter in [min, max].
func Int(name string, def, min, max int, doc string) Param {
	return Param{Name: name, Type: TypeInt, Default: def, Min: bound(float64(min)), Max: bound(float64(max)), Doc: doc}
}

// Enum declares a string parameter taking one of values.
func Enum(name, def string, values []string, doc string) Param {
	return Param{Name: name, Type: TypeString, Default: def, Enum: values, Doc: doc}
}

// Bool declares a boolean parameter.
func Bool(name string, def bool, doc string) Param {
	return Param{Name: name, Type: TypeBool, Default: def, Doc: doc}
}

// Limit bounds every numeric range that a learner declares open: the
// parameters are relative or dimensionless, so larger magnitudes only
// overflow a solver (C = 1e200 made HSIC-NPK's eigensolver panic). Every
// range is thus finite, and listed with the learner.
const Limit = 1e6

func bound(v float64) *float64 {
	v = math.Max(-Limit, math.Min(Limit, v))
	return &v
}

// ParamError reports an invalid parameter of a plug-in (Learner names it).
type ParamError struct {
	Learner, Param, Msg string
	// Noun says what the plug-in is in the message: "learner" (the
	// default), "strategy" for a fixed one, "scorer".
	Noun string
}

func (e *ParamError) Error() string {
	noun := e.Noun
	if noun == "" {
		noun = "learner"
	}
	if e.Param == "" {
		return fmt.Sprintf("%s %s: %s", noun, e.Learner, e.Msg)
	}
	return fmt.Sprintf("%s %s: parameter %q: %s", noun, e.Learner, e.Param, e.Msg)
}

// noun is what s is called in messages.
func (s Spec) noun() string {
	switch {
	case s.Fixed:
		return "strategy"
	case s.Kind == KindScorer:
		return "scorer"
	}
	return "learner"
}

// Values holds validated parameter values, defaults filled in. The getters
// panic on a name the spec does not declare: that is a bug in the learner.
type Values map[string]any

// Float returns a float parameter.
func (v Values) Float(name string) float64 { return v.get(name).(float64) }

// Int returns an integer parameter.
func (v Values) Int(name string) int { return v.get(name).(int) }

// String returns a string parameter.
func (v Values) String(name string) string { return v.get(name).(string) }

// Bool returns a boolean parameter.
func (v Values) Bool(name string) bool { return v.get(name).(bool) }

func (v Values) get(name string) any {
	x, ok := v[name]
	if !ok {
		panic("learners: undeclared parameter " + name)
	}
	return x
}

// ParseParams validates JSON parameters against spec, filling in defaults.
func ParseParams(spec Spec, raw json.RawMessage) (Values, error) {
	v, _, err := parseParams(spec, raw)
	return v, err
}

// parseParams is ParseParams that also returns the names of the
// parameters raw gives.
func parseParams(s Spec, raw json.RawMessage) (Values, map[string]bool, error) {
	given := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &given); err != nil {
			return nil, nil, &ParamError{Learner: s.Name, Noun: s.noun(), Msg: "parameters must be a JSON object: " + err.Error()}
		}
	}
	for name := range given {
		if !slices.ContainsFunc(s.Params, func(p Param) bool { return p.Name == name }) {
			known := make([]string, len(s.Params))
			for i, p := range s.Params {
				known[i] = p.Name
			}
			sort.Strings(known)
			return nil, nil, &ParamError{Learner: s.Name, Noun: s.noun(), Param: name, Msg: fmt.Sprintf("unknown parameter (known: %s)", strings.Join(known, ", "))}
		}
	}
	v := Values{}
	for _, p := range s.Params {
		val := p.Default
		if r, ok := given[p.Name]; ok {
			var err error
			if val, err = decodeParam(p, r); err != nil {
				return nil, nil, &ParamError{Learner: s.Name, Noun: s.noun(), Param: p.Name, Msg: err.Error()}
			}
		}
		if err := p.check(val); err != nil {
			return nil, nil, &ParamError{Learner: s.Name, Noun: s.noun(), Param: p.Name, Msg: err.Error()}
		}
		v[p.Name] = val
	}
	names := make(map[string]bool, len(given))
	for name := range given {
		names[name] = true
	}
	return v, names, nil
}

func decodeParam(p Param, r json.RawMessage) (any, error) {
	switch p.Type {
	case TypeFloat, TypeInt:
		var f float64
		if err := json.Unmarshal(r, &f); err != nil {
			return nil, fmt.Errorf("want a number, got %s", r)
		}
		if p.Type == TypeFloat {
			return f, nil
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("want an integer, got %s", r)
		}
		return int(f), nil
	case TypeString:
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, fmt.Errorf("want a string, got %s", r)
		}
		return s, nil
	case TypeBool:
		var b bool
		if err := json.Unmarshal(r, &b); err != nil {
			return nil, fmt.Errorf("want true or false, got %s", r)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unsupported parameter type %q", p.Type)
}

func (p Param) check(val any) error {
	var x float64
	switch val := val.(type) {
	case float64:
		x = val
	case int:
		x = float64(val)
	case string:
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, val) {
			return fmt.Errorf("%q is not one of %s", val, strings.Join(p.Enum, ", "))
		}
		return nil
	case bool:
		return nil
	default:
		return fmt.Errorf("default %v has an unsupported type %T", val, val)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("must be finite, got %v", x)
	}
	below := p.Min != nil && (x < *p.Min || p.MinExclusive && x == *p.Min)
	if below || p.Max != nil && x > *p.Max {
		return fmt.Errorf("must be in %s, got %g", p.interval(), x)
	}
	return nil
}

// interval is the valid range in interval notation, e.g. (0, 1e+06].
func (p Param) interval() string {
	lo, hi := "(-inf", "+inf)"
	if p.Min != nil {
		lo = fmt.Sprintf("[%g", *p.Min)
		if p.MinExclusive {
			lo = fmt.Sprintf("(%g", *p.Min)
		}
	}
	if p.Max != nil {
		hi = fmt.Sprintf("%g]", *p.Max)
	}
	return lo + ", " + hi
}
