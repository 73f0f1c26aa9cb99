package eval

var abbasnejadSuite = suite{methods: func() []string { return nil }, methodTables: func(string) []string { return nil }}
