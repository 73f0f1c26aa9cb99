// Package recommend is kernelrank's friend and group recommender (Zhuang's
// thesis, chapter 7): the base kernels of package social over the users,
// combined by a pluggable kernel-combination learner (alignf by default:
// kernel target alignment with the friendships as the target), then kernel
// logistic regression on user pairs (package learners/mklr) scores the
// social strength f(u, v) of every pair.
//
// Friends of u are the non-friends v ranked by f(u, v); groups are the
// groups u is not in, ranked by s(g, u), the expected number of u's
// friends among g's members (section 7.4.3 sums f: see GroupScores). Every
// recommendation carries its explanation: the contribution
// theta_t K^t(u, v) of each base kernel to the combined kernel and its own
// term in f, the common friends, and for groups the friends of u in the
// group.
//
// Train builds a Model from a data set and a view of its relations (an
// evaluation hides some); Service holds one trained Model per learner for a
// server, training on demand in the background.
package recommend
