package server

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDoc is the OpenAPI 3 document of every route; openapi_test.go
// checks it against the router and the responses against it.
//
//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIDoc)
}
