package social

import "math/rand/v2"

// HoldOut hides friendships for validation or testing: it walks a seeded
// permutation of friends and holds each out while both of its ends keep
// at least 2 visible friends, until target of them are held out or the
// walk ends. Every user keeps friends to learn from, and the order of
// friends is kept in both lists.
func HoldOut(n int, friends [][2]int, target int, rng *rand.Rand) (visible, held [][2]int) {
	deg := make([]int, n)
	for _, e := range friends {
		deg[e[0]]++
		deg[e[1]]++
	}
	hide := make([]bool, len(friends))
	count := 0
	for _, idx := range rng.Perm(len(friends)) {
		if count == target {
			break
		}
		e := friends[idx]
		if deg[e[0]] > 2 && deg[e[1]] > 2 {
			hide[idx] = true
			deg[e[0]]--
			deg[e[1]]--
			count++
		}
	}
	for idx, e := range friends {
		if hide[idx] {
			held = append(held, e)
		} else {
			visible = append(visible, e)
		}
	}
	return visible, held
}
