// Package dataset holds the loaders for the evaluation data sets that live
// outside the repository, in ../shared/data beside the module root (see
// MANIFEST.md there): the Corel5k multi-label image set (Mulan ARFF + XML),
// the UCI tables (PMLB gzip TSV, LIBSVM text, the dense a1a CSV), and the
// evaluation protocols built on them (noisy user tags and the query split for
// the image-search evaluation).
//
// Nothing here copies the data into the project: callers locate it with
// DataDir, and files whose exact bytes matter are checked against the md5
// sums of the manifest (KnownMD5, VerifyMD5) so that a changed file is a
// clear error rather than a silently different result.
//
// All loaders return dense float64 rows ([][]float64, one slice per
// instance) and report malformed input with a *ParseError that names the
// file and the 1-based line number.
package dataset
