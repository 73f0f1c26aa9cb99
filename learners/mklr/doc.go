// Package mklr is kernel logistic regression on user pairs, trained as an
// import vector machine: the second stage of Zhuang's social-strength model
// (thesis section 7.4, spec B.3), which scores how likely two users are to
// be friends from a combined user kernel K_u (the first stage: e.g. the
// learners/alignf weights combined with learners.NewKernelSum).
//
// # Model
//
// A pair (i1, i2) of users is a point; the pair kernel of section 7.4.1 is
// the kernel of the feature differences phi(i1) - phi(i2):
//
//	D((i1,i2), (j1,j2)) = K_u(i1,j1) + K_u(i2,j2) - K_u(i1,j2) - K_u(i2,j1).
//
// The score of a pair is
//
//	f(i, j) = b + gamma K_u(i, j) + sum_{s in S} alpha_s P((i, j), s)
//
// over the import set S of training pairs, where P is the pair kernel chosen
// by Options.Pair, b an intercept and gamma K_u(i, j) an optional term:
//
//   - PairSquared (the default) is P = D^2, the kernel of the symmetric
//     features (phi(i1) - phi(i2)) (phi(i1) - phi(i2))' (the "metric
//     learning pairwise kernel" of Vert, Qiu & Noble, BMC Bioinformatics
//     2007): sum_s alpha_s P = (phi_i - phi_j)' W (phi_i - phi_j), a learned
//     (indefinite) metric, symmetric in i and j.
//   - PairDifference is P = D, the thesis' kernel as written. DEVIATION
//     (why it is not the default): with it every model is
//     f(i, j) = b + g(i) - g(j) for g(u) = w'phi(u), so the ranking of the
//     other users by f(i, .) is the same global order for every user i
//     (TestDifferenceKernelRanksGlobally), and f(i, j) + f(j, i) = 2b, so an
//     undirected friendship cannot score positive both ways. It suits
//     directed relations only; it is kept to reproduce the thesis.
//
// Training minimises objective (7.3) with labels y in {-1, +1} (+1 =
// friends; the spec's reading of the thesis' y = 1 - z):
//
//	L = (1/N) sum_t ln(1 + exp(-y_t f_t)) + (C/2) alpha' P_SS alpha,
//
// f_t the score of training pair t and P_SS the pair kernel over S.
// DEVIATIONS, both unpenalised: the intercept b, on by default
// (Options.NoIntercept drops it): it changes no ranking, but without it
// P(z = 1) = sigmoid(f) cannot be calibrated (with PairSquared every pair
// of identical users would score 0), and the group score
// s(g, u) = sum_{j in g} f(u, j) of section 7.4.3 depends on it; and the
// term gamma K_u(i, j), off by default (Options.KernelTerm): the
// "rectification" of the first-stage kernel the thesis describes, which
// no finite import set of PairSquared can express (K_u(i, j) is the
// metric W = -I/2 plus per-user terms). With NoIntercept and without
// KernelTerm the objective is (7.3) exactly.
//
// On held-out friendships (BenchmarkHeldOut: 10% hidden, precision at 10
// among each user's non-friends, defaults otherwise):
//
//	                              ego-Facebook  BlogCatalog
//	thesis as written (D, no b)   0.0001        0.0057  (one global order)
//	default (D^2, b)              0.116         0.050
//	with the kernel term          0.247         0.027
//	ranking by K_u alone          0.247         0.026
//
// Neither extension wins on both data sets, so the default stays the one
// closer to the thesis.
//
// # Import vector machine (Zhu & Hastie, NIPS 2001; JCGS 2005)
//
// S starts empty (the fit is then b alone: the log-odds of the positives,
// and gamma). Each round draws Options.Candidates pairs not in S uniformly
// at random (seeded: the random-subset speed-up of sparse greedy methods,
// Smola & Schölkopf 2000, rather than scanning all pairs) and scores each
// candidate l by the decrease of L predicted by one Newton step on S + {l}
// from the current fit, the quantity Zhu & Hastie evaluate: with H and g
// the Hessian and gradient of the fit on S, h_l, g_l and h_ll the new
// column, gradient entry and diagonal,
//
//	decrease = (g_l - h_l' H^-1 g)^2 / (2 (h_ll - h_l' H^-1 h_l))
//
// (the quadratic model of that step; its exact objective would cost a pass
// over the pairs per candidate). A candidate whose pair-kernel column lies
// in the span of S's (Schur complement of P_SS at most 1e-8 of its
// diagonal: a repeated pair or, for PairDifference, a pair closing a
// cycle) can lower nothing and leaves the pool. The best candidate joins S
// and (alpha, b, gamma) is refitted by Newton steps (closed-form gradient
// and Hessian, Cholesky, Armijo backtracking) until half the squared
// Newton decrement is below 1e-14 of the loss (or, when rounding stops the
// loss from falling, below 1e-8). Training stops when a round lowers L by
// less than Options.Tol relative (default 0.1%: Zhu & Hastie's rule with
// Delta k = 1), when |S| reaches Options.MaxImport, or when no candidate is
// left. L never rises from round to round: each refit starts from the
// previous optimum with the new coefficient 0. With every pair importable
// and no stop, the IVM is full kernel logistic regression
// (TestAllImportedEqualsFullKLR).
//
// Cost per round with N training pairs, m = |S|, c candidates and n users:
// 2c rows of K_u, c (N + n) for the candidates' columns, N m c for their
// coupling with S, and N m^2 for each Hessian (about two a round; sums over
// the pairs run in parallel, in a fixed order). Memory: N MaxImport
// floats for the columns of S plus N c for the candidates'.
//
// # Training pairs (section 7.4.2)
//
// Positives are the (visible) friendships. Negatives come from
// SampleNegatives: for user i, the candidates are the users that are in no
// base kernel's top-N neighbourhood of i and not friends of i, and N_e of
// them are drawn at random (seeded). The thesis' sentence ("choose the top
// N_e users that appear in the top N users of u_i under all the similarity
// measures") is garbled; this is the spec's reading. Ties: a user is in
// kernel t's top-N of i when K_t(i, j) is at least the N-th largest value
// of the row (ties at the boundary are all in, to stay conservative) and
// above the row's minimum (so that the many zeros of a sparse row are not
// all "neighbours"). The thesis' extra positives from the comment kernel
// ("most frequently communicate with u_i") need comments, which neither
// ego-Facebook nor BlogCatalog has; a caller that has them appends them to
// the positives.
//
// # Serving
//
// A Model keeps, for each user u and import s = (s1, s2),
// e_s(u) = K_u(u, s1) - K_u(u, s2): n x |S| floats (and K_u itself when
// trained with KernelTerm). Score(i, j) costs O(|S|); ScoreAll(i, .) one
// n x |S| matrix-vector product (plus a row of K_u with KernelTerm).
//
// # Measured
//
// BenchmarkTrain, BenchmarkScoreAll (2 cores shared with other jobs; the
// whole friend task: default-mode kernels without the regularised
// Laplacian, alignf, negatives, Train with the defaults):
//
//	                         ego-Facebook        BlogCatalog
//	users, training pairs    4,039, 168,786      10,312, 540,016
//	kernels + alignment      0.3 s               1.7 s
//	negatives                0.9 s               4.9 s
//	Train (defaults)         7.5 s, 36 imports   18 s, 25 imports
//	whole, wall              8.7 s               25 s
//	peak RSS (test binary)   352 MB              736 MB
//	ScoreAll, median         22 µs               59 µs
//	  with the kernel term   56 µs               205 µs
//
// Growing S to the cap of 100 imports (Tol < 0) on ego-Facebook takes
// 56 s of CPU (57 s wall, 620 MB): the N m^2 Hessians dominate, then the
// N m c couplings.
//
// # Not registered
//
// mklr outputs a scoring model over pairs, which no learners.Kind describes
// (kernel, weights, embedding) and which the contract suite cannot check;
// its input (a combined kernel plus labelled pairs) is not a
// learners.Input either. Rather than stretch the contract, the package
// exports Train, SampleNegatives and Model, which the social recommenders
// call directly; registering it would need a model kind in learners first.
package mklr
