package server

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// apiError is the body of every error response: {"error": {"code", "message"}}.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func fail(c *gin.Context, status int, code, msg string) {
	var body apiError
	body.Error.Code, body.Error.Message = code, msg
	c.AbortWithStatusJSON(status, body)
}

func badRequest(c *gin.Context, msg string) { fail(c, http.StatusBadRequest, "bad_request", msg) }
