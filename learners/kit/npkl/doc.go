// Package npkl is the solver of nonparametric kernel learning that
// SimpleNPKL (Zhuang thesis ch. 3) and the embedding learners built on it
// (CMVU, MVE, SPE; ch. 4) share, so that no learner imports another: the
// Problem max tr(A(w) K) over PSD K under a trace-norm budget (B-form) or
// penalty (G-form) with its closed form (Props. 3.25, 3.26); the Dual
// interface and Solve, Protocol 1's projected gradient ascent on the
// multipliers (L-BFGS scaled on box sets) stopped by a relative
// duality-gap certificate; the Term algebra of the objective's base
// matrix (identity, graph adjacency, low rank, sums); the kNN
// Neighborhood and distance dual of the embeddings; and Embed.
package npkl
