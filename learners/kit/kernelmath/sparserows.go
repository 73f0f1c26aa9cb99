package kernelmath

// SparseRows returns a visitor of the non-zeros of k's rows when k is a
// Gram D X X' D (factorOf): row(i, visit) calls visit(j, v) once for each
// feature i shares with j, the K(i, j) being the sum of those v. A row
// costs cost(i) visits: the sum over i's features of the users that have
// them (the two-step neighbourhood of i), not n; cost takes O(i's
// features). It reports false for any other kernel.
func SparseRows(k KernelMatrix) (row func(i int, visit func(j int, v float64)), cost func(i int) int, ok bool) {
	f, ok := factorOf(k)
	if !ok || f.gram == nil {
		return nil, nil, false
	}
	row = func(i int, visit func(j int, v float64)) {
		di := f.scale(i)
		cols, vals := f.gram.x.row(i)
		for p, a := range cols {
			x := di * vals[p]
			users, ys := f.gram.xt.row(int(a))
			for q, j := range users {
				visit(int(j), x*f.scale(int(j))*ys[q])
			}
		}
	}
	cost = func(i int) int {
		c := 0
		cols, _ := f.gram.x.row(i)
		for _, a := range cols {
			c += f.gram.xt.ptr[a+1] - f.gram.xt.ptr[a]
		}
		return c
	}
	return row, cost, true
}
