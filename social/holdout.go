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
	return holdOut(friends, target, rng, func(e [2]int) bool {
		if deg[e[0]] > 2 && deg[e[1]] > 2 {
			deg[e[0]]--
			deg[e[1]]--
			return true
		}
		return false
	})
}

// HoldOutMemberships hides memberships (user, group) for validation: it
// walks a seeded permutation of memberships and holds each out while its
// user keeps at least one visible membership, until target of them are
// held out or the walk ends. Every user keeps a group to learn from, and
// the order of memberships is kept in both lists.
func HoldOutMemberships(n int, memberships [][2]int, target int, rng *rand.Rand) (visible, held [][2]int) {
	count := make([]int, n)
	for _, e := range memberships {
		count[e[0]]++
	}
	return holdOut(memberships, target, rng, func(e [2]int) bool {
		if count[e[0]] > 1 {
			count[e[0]]--
			return true
		}
		return false
	})
}

// holdOut walks a seeded permutation of pairs and holds out those take
// accepts (take updates its own counts) until target are held out.
func holdOut(pairs [][2]int, target int, rng *rand.Rand, take func([2]int) bool) (visible, held [][2]int) {
	hide := make([]bool, len(pairs))
	count := 0
	for _, idx := range rng.Perm(len(pairs)) {
		if count == target {
			break
		}
		if take(pairs[idx]) {
			hide[idx] = true
			count++
		}
	}
	for idx, e := range pairs {
		if hide[idx] {
			held = append(held, e)
		} else {
			visible = append(visible, e)
		}
	}
	return visible, held
}
