package server

import _ "embed"

// openAPIDoc is the OpenAPI 3 document of every route, served at
// /v1/openapi.json; openapi_test.go checks it against the router and the
// answers against it.
//
//go:embed openapi.json
var openAPIDoc []byte
