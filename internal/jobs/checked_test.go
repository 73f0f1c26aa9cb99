package jobs

import (
	"context"
	"errors"
	"testing"
)

// A Checked queue validates a spec, then checks it: a refusal wraps ErrSpec
// and queues nothing; an invalid spec never reaches the check.
func TestChecked(t *testing.T) {
	var checked []Spec
	l := NewLocal(func(context.Context, string, Spec, func(string, float64)) (string, error) { return "v", nil }, 0)
	defer l.Close()
	q := Checked(l, func(s Spec) error {
		checked = append(checked, s)
		if s.Learner == "nope" {
			return errors.New("unknown learner \"nope\"")
		}
		return nil
	})
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, Spec{Target: TargetSocial, Learner: "nope"}); !errors.Is(err, ErrSpec) ||
		err.Error() != `bad job spec: unknown learner "nope"` {
		t.Errorf("refused: %v", err)
	}
	if _, err := q.Enqueue(ctx, Spec{Target: "moon"}); !errors.Is(err, ErrSpec) || len(checked) != 1 {
		t.Errorf("invalid: %v, %d checks (want 1: the invalid spec is not checked)", err, len(checked))
	}
	if list, _ := q.List(ctx, 10); len(list) != 0 {
		t.Errorf("refused jobs were queued: %v", list)
	}
	j, err := q.Enqueue(ctx, Spec{Target: TargetSocial})
	if err != nil || len(checked) != 2 {
		t.Fatalf("accepted: %v, %d checks", err, len(checked))
	}
	if got, err := q.Get(ctx, j.ID); err != nil || got.ID != j.ID {
		t.Errorf("the queue behind the check does not have the job: %v %v", got, err)
	}
}
