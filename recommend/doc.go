// Package recommend is kernelrank's friend and group recommender (Zhuang's
// thesis, chapter 7): the base kernels of package social over the users,
// combined by a pluggable kernel-combination learner (alignf by default:
// kernel target alignment with the friendships as the target), then kernel
// logistic regression on user pairs (package learners/mklr) scores the
// social strength f(u, v) of every pair.
//
// Friends of u are the non-friends v ranked by the friend scorer Train
// chose on friendships it held out of its training data (select.go): f(u,
// v), the combined kernel alone or Adamic-Adar, whichever ranked the
// held-out friends best, so that the served ranking is never one that did
// worse on the deployment's own data than another candidate; groups are the
// groups u is not in, ranked by the group scorer Train chose the same way
// on memberships it held out (groups.go): s(g, u), the expected number of
// u's friends among g's members (section 7.4.3 sums f: see
// groupSignal), a friend vote, an Adamic-Adar vote, a regularised
// Laplacian vote, or a combination of these and group-side signals whose
// weights were fitted on the held-out memberships. Every
// recommendation carries its explanation: the contribution
// theta_t K^t(u, v) of each base kernel to the combined kernel and its own
// term in f, the common friends, and for groups the friends of u in the
// group.
//
// Train builds a Model from a data set and a view of its relations (an
// evaluation hides some). A model trained on all relations is stored as an
// immutable version of a cache.Store model (Encode, Load: store.go): its
// weights, strength-model state and precomputed top-k lists, not its
// kernels, which Load rebuilds from the data set. Service is the one
// facade over train, publish, load and serve: per learner it loads the
// published version that fits the data or trains and publishes one,
// retrains for jobs (Retrain), and follows the versions other processes
// publish.
package recommend
