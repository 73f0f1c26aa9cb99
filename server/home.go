package server

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

//go:embed ui.html
var uiPage []byte

// home serves the embedded search page.
func (s *Server) home(c *gin.Context) {
	c.Data(http.StatusOK, "text/html; charset=utf-8", uiPage)
}
