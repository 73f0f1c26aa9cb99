package jobs

import (
	"context"
	"fmt"
)

// Dispatch returns the Handler of every target from the work of each:
// social and search jobs run their handler, "all" runs social then search
// (the first half of the progress is social's, the second search's), both
// publishing under the job's id; its version is both versions, social's
// then search's, separated by a space. A nil handler means that target is not
// available here: its jobs fail with an error wrapping ErrSpec.
func Dispatch(social, search Handler) Handler {
	return func(ctx context.Context, id string, spec Spec, progress func(string, float64)) (string, error) {
		switch spec.Target {
		case TargetSocial:
			return need(social, TargetSocial)(ctx, id, spec, progress)
		case TargetSearch:
			return need(search, TargetSearch)(ctx, id, spec, progress)
		case TargetAll:
			part := func(h Handler, name string, from float64) (string, error) {
				return need(h, name)(ctx, id, spec, func(stage string, f float64) {
					progress(name+": "+stage, from+clamp(f)/2)
				})
			}
			sv, err := part(social, TargetSocial, 0)
			if err != nil {
				return "", err
			}
			cv, err := part(search, TargetSearch, 0.5)
			if err != nil {
				return "", err
			}
			return sv + " " + cv, nil
		}
		return "", spec.Validate()
	}
}

// need returns h, or a handler failing because target is not available.
func need(h Handler, target string) Handler {
	if h != nil {
		return h
	}
	return func(context.Context, string, Spec, func(string, float64)) (string, error) {
		return "", fmt.Errorf("%w: target %q is not available on this server", ErrSpec, target)
	}
}
