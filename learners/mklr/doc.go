// Package mklr is kernel logistic regression on user pairs, trained as an
// import vector machine: the second stage of Zhuang's social-strength model
// (thesis section 7.4, spec B.3), which scores how likely two users are to
// be friends from a combined user kernel K_u (the first stage: e.g. the
// learners/alignf weights combined with kernelmath.NewKernelSum).
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
//	f(i, j) = b + gamma K_u(i, j) + sum_t gamma_t K^t(i, j) + sum_{s in S} alpha_s P((i, j), s)
//
// over the import set S of training pairs, where P is the pair kernel chosen
// by Options.Pair, b an intercept and the gamma terms optional:
//
//   - PairTensor (the default) is the symmetric tensor-product pair kernel
//     P((i1,i2), (j1,j2)) = K_u(i1,j1) K_u(i2,j2) + K_u(i1,j2) K_u(i2,j1)
//     (Ben-Hur & Noble, Bioinformatics 2005): sum_s alpha_s P = phi_i' W phi_j
//     with W = sum_s alpha_s (phi_s1 phi_s2' + phi_s2 phi_s1'), a learned
//     bilinear similarity, symmetric in i and j.
//   - PairSquared is P = D^2, the kernel of the symmetric features
//     (phi(i1) - phi(i2)) (phi(i1) - phi(i2))' (the "metric learning
//     pairwise kernel" of Vert, Qiu & Noble, BMC Bioinformatics 2007):
//     sum_s alpha_s P = (phi_i - phi_j)' W (phi_i - phi_j), a learned
//     (indefinite) metric.
//   - PairDifference is P = D, the thesis' kernel as written. With it every
//     model is f(i, j) = b + g(i) - g(j) for g(u) = w'phi(u), so the ranking
//     of the other users by f(i, .) is the same global order for every user
//     i (TestDifferenceKernelRanksGlobally), and f(i, j) + f(j, i) = 2b, so
//     an undirected friendship cannot score positive both ways. It suits
//     directed relations only; it is kept to reproduce the thesis.
//
// Training minimises objective (7.3) with labels y in {-1, +1} (+1 =
// friends; the spec's reading of the thesis' y = 1 - z):
//
//	L = (1/N) sum_t ln(1 + exp(-y_t f_t)) + (C/2) alpha' P_SS alpha,
//
// f_t the score of training pair t and P_SS the pair kernel over S. The
// intercept b (on by default; Options.NoIntercept drops it), gamma
// (Options.KernelTerm) and the gamma_t of Options.Base are unpenalised:
// b changes no ranking but calibrates P(z = 1) = sigmoid(f) and enters the
// group score s(g, u) = sum_{j in g} f(u, j) of section 7.4.3 (see below
// for why sums should add strengths); gamma K_u is the "rectification" of
// the first-stage kernel the thesis describes, which no finite import set
// can express (K_u(i, j) is W = I); with Base
// (the kernels K_u combines, passed by the caller) the logistic loss refits
// the first stage's weights for ranking. With PairDifference, NoIntercept,
// no KernelTerm and no Base the objective is (7.3) exactly.
//
// DEVIATION (the defaults: PairTensor, C = 1e-5, and NegHard negatives,
// see Training pairs; callers pass Base). The thesis' choices, still
// selectable, rank badly on held-out friendships (`kernelrank eval
// social`): the former default, D^2 with conservative negatives, ranks
// far below Adamic-Adar, and the negatives matter only once the model can
// rank, and that model with the kernel term or Base added is K_u itself
// (the import vector machine stops after a few imports). A sum of the scores f over a group's members adds b once a
// member, so with b < 0 it ranks the smallest groups first; recommend's
// mklr group scorer sums the strengths corrected to the population's
// friendship rate instead: the expected number of friends in the group.
// On cosine-normalised kernels the model stays under Adamic-Adar, because
// ranking the users j by a normalised kernel divides by j's degree, which
// Adamic-Adar rewards, and no term additive in f can multiply it back;
// with the degrees kept (social.ModeDefault) it beats Adamic-Adar. The
// tables and ablations are in docs/evaluation.md ("mklr's defaults").
//
// # Import vector machine (Zhu & Hastie, NIPS 2001; JCGS 2005)
//
// S starts empty (the fit is then b, started at the log-odds of the
// positives, and the gammas). Each round draws Options.Candidates pairs not
// in S uniformly at random (seeded: the random-subset speed-up of sparse
// greedy methods, Smola & Schölkopf 2000, rather than scanning all pairs)
// and scores each candidate l by the decrease of L predicted by one Newton
// step on S + {l} from the current fit, the quantity Zhu & Hastie
// evaluate: with H and g
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
// and (alpha, b, the gammas) is refitted by Newton steps (closed-form
// gradient and Hessian, Cholesky, Armijo backtracking) until half the squared
// Newton decrement is below 1e-14 of the loss (or, when rounding stops the
// loss from falling, below 1e-8); a step may reuse an earlier point's
// Hessian while the decrement keeps falling fast (a chord step), and a
// refit starts from the last Hessian bordered by the new import's row,
// which its scoring computed (see refit: the optimum is the same, the
// Hessians fewer). Training stops when a round lowers L by
// less than Options.Tol relative (default 0.1%: Zhu & Hastie's rule with
// Delta k = 1), when |S| reaches Options.MaxImport, or when no candidate is
// left. L never rises from round to round: each refit starts from the
// previous optimum with the new coefficient 0. With every pair importable
// and no stop, the IVM is full kernel logistic regression
// (TestAllImportedEqualsFullKLR).
//
// Cost per round with N training pairs, m = |S|, q fixed features, c
// candidates and n users: 2c rows of K_u, c N pair-kernel values (from the
// candidates' rows laid out user by user: two short rows a pair), N (m+q) c
// for their coupling with S and the fixed features, N (m+q)^2 / 2 for each
// Hessian (one symmetric product; about three a round on BlogCatalog) and
// N (m+q) for each Newton step's two matrix-vector products. Sums over
// the pairs run in parallel in chunks, added in a fixed order. Memory: N
// (MaxImport + q) floats for the columns of S and the fixed features; a
// candidate's column over the pairs is never stored (only a chunk's).
//
// # Training pairs (section 7.4.2)
//
// Positives are the (visible) friendships. Negatives come from
// SampleNegatives, for each user i N_e of the candidates NegativeOptions.Mode
// gives, drawn at random (seeded), never i or a friend of i:
//
//   - NegHard (the default): the users sharing a friend with i. DEVIATION:
//     the spec's negatives are far users any model tells from friends by
//     K_u alone, whereas a friend ranking must order the users near i.
//   - NegConservative, the spec's reading of section 7.4.2: the users that
//     are in no base kernel's top-N neighbourhood of i. The thesis'
//     sentence ("choose the top N_e users that appear in the top N users of
//     u_i under all the similarity measures") is garbled. Ties: a user is
//     in kernel t's top-N of i when K_t(i, j) is at least the N-th largest
//     value of the row (ties at the boundary are all in, to stay
//     conservative) and above the row's minimum (so that the many zeros of
//     a sparse row are not all "neighbours").
//   - NegRandom: any user.
//
// The thesis' extra positives from the comment kernel ("most frequently
// communicate with u_i") need comments, which neither ego-Facebook nor
// BlogCatalog has; a caller that has them appends them to the positives.
//
// # Serving
//
// A Model keeps, for each user u and import s = (s1, s2), K_u(u, s1) and
// K_u(u, s2) (PairTensor: n x 2|S| floats) or e_s(u) = K_u(u, s1) -
// K_u(u, s2) (n x |S|), and the kernels of its terms. Score(i, j) costs
// O(|S|) plus an entry of each term's kernel; ScoreAll(i, .) one
// matrix-vector product plus a row of each.
//
// # Cost
//
// BenchmarkTrain and BenchmarkScoreAll measure the whole friend task and
// the serving of one user (docs/evaluation.md, "mklr's defaults"), and
// BenchmarkFit Train alone (docs/scaling.md): training is dominated by
// Train's rounds, and ScoreAll allocates twice
// (the row of the base kernels' sum, the import weights).
//
// # Registered
//
// The registry lists mklr as a scorer (learners.KindScorer, Name): its
// spec declares every field of Options but Base, and OptionsOf reads them,
// so the registry's parameters are its one surface. The social
// recommenders resolve their mklr parameters through that spec and call
// Train, SampleNegatives and Model directly, for what the contract's
// Output does not carry (the model's state, its explanations).
package mklr
