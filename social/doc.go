// Package social holds the user model of social-strength modelling (Zhuang's
// thesis, chapter 7): users with photos (visual vector, tags, time, geo),
// profile tags and places, friendships, group memberships, comments and
// faves; the importers that read it (the documented kernelrank format, SNAP
// ego-Facebook and BlogCatalog, see README.md); and the base kernels over
// users that the kernel learners combine (section 7.2.2, plus graph kernels a
// friend recommender needs), with the thesis' preprocessing and a better
// default.
//
// Users are indexed 0..n-1 in natural order of their ids (digit runs compare
// as numbers, so "2" < "10"). Kernels are kernelmath.KernelMatrix values: none
// of them forms an n x n matrix unless it is small (see BuildKernels), so the
// package scales to BlogCatalog's 10,312 users.
package social
