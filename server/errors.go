package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

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

// internalError answers 500 with the request id, the one thing a client
// can quote to find the logged cause.
func internalError(c *gin.Context) {
	fail(c, http.StatusInternalServerError, "internal", "internal error (request "+c.GetString("request_id")+")")
}

// onlyParams answers 400 and returns false when the query has a parameter
// not among known: a misspelt parameter must not be silently ignored.
func onlyParams(c *gin.Context, known ...string) bool {
	for name := range c.Request.URL.Query() {
		if !slices.Contains(known, name) {
			msg := "unknown query parameter " + strconv.Quote(name)
			if len(known) == 0 {
				msg += ": this endpoint takes none"
			} else {
				msg += " (known: " + strings.Join(known, ", ") + ")"
			}
			badRequest(c, msg)
			return false
		}
	}
	return true
}
