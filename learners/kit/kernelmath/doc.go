// Package kernelmath is the numerics the kernel learners share, written
// once: base kernels and kernel algebra (centring, normalisation, PSD
// projection, alignment, HSIC), kernel matrices stored or implicit (sparse,
// low-rank, scaled, summed), symmetric eigensolvers (the partial
// tridiagonal one of the hot path, Lanczos and subspace iteration for the k
// extreme eigenpairs), simplex and non-negative QP, SVM, k-means, kNN
// graphs and their Laplacians, and the scratch pools that keep n x n
// allocations out of loops. It imports nothing of the project but
// internal/vecmath, so any package may use it.
package kernelmath
