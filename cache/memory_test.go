package cache

import (
	"fmt"
	"testing"
	"time"
)

func TestMemoryBudget(t *testing.T) {
	const budget = 1 << 20
	m := newMemory(t, budget)
	val := make([]byte, 10<<10)
	// 16 times the budget.
	for i := range 16 * budget / len(val) {
		mustSet(t, m, fmt.Sprint("k", i), val, time.Hour)
		if w := m.Weight(); w > budget {
			t.Fatalf("after %d values: %d bytes held, budget %d", i+1, w, budget)
		}
	}
	if w := m.Weight(); w < budget/2 {
		t.Errorf("%d bytes held: the budget %d is not used", w, budget)
	}
	// A value larger than the budget is not kept, and replaces the old.
	mustSet(t, m, "huge", []byte("small"), time.Hour)
	mustSet(t, m, "huge", make([]byte, budget), time.Hour)
	mustMiss(t, m, "huge")
}

func TestMemoryDefaultBudget(t *testing.T) {
	m := newMemory(t, 0)
	if got := m.c.GetMaximum(); got != DefaultBytes {
		t.Errorf("budget %d, want %d", got, DefaultBytes)
	}
}

// TestMemoryNotAliased: the cache keeps its own copy of a value.
func TestMemoryNotAliased(t *testing.T) {
	m := newMemory(t, 1<<20)
	val := []byte("abc")
	mustSet(t, m, "k", val, time.Hour)
	val[0] = 'X'
	if got := mustGet(t, m, "k"); string(got) != "abc" {
		t.Errorf("get after the caller changed its slice: %q", got)
	}
}
