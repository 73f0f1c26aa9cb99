package recommend

import (
	"slices"
	"sync"
	"testing"
)

// Training reports its stages in the order of Stages (without the group
// scorers' validation when there are no memberships), each starting at 0,
// with fractions that never fall and end at 1 where counted.
func TestTrainingReportsItsStages(t *testing.T) {
	ds := sharedFaves(t)
	var mu sync.Mutex
	var stages []string
	last := map[string]float64{}
	trainT(t, ds, Options{Progress: func(stage string, f float64) {
		mu.Lock()
		defer mu.Unlock()
		if len(stages) == 0 || stages[len(stages)-1] != stage {
			stages = append(stages, stage)
			if f != 0 {
				t.Errorf("stage %q starts at %v", stage, f)
			}
		}
		if f < last[stage] || f > 1 {
			t.Errorf("stage %q: %v after %v", stage, f, last[stage])
		}
		last[stage] = f
	}})
	want := slices.DeleteFunc(slices.Clone(Stages), func(s string) bool { return s == StageGroupsVal && len(ds.Memberships) == 0 })
	if !slices.Equal(stages, want) {
		t.Errorf("stages %q, want %q", stages, want)
	}
	for _, s := range want {
		if (s == StageFriendsVal || s == StageGroupsVal) && last[s] != 1 {
			t.Errorf("stage %q ended at %v", s, last[s])
		}
	}
}
