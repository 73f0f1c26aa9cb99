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

// fail answers an error. A request that came with a body is answered with
// "Connection: close": net/http would otherwise read up to 256 KiB of the
// unread body before answering (to reuse the connection), so a refusal (a bad
// token, a body over the limit) would wait for a slow or stalled client.
func fail(c *gin.Context, status int, code, msg string) {
	if c.Request.ContentLength != 0 {
		c.Header("Connection", "close")
	}
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
