package server

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
)

// web holds the pages and their assets: plain HTML, CSS and JS calling the
// /v1 API, no build step and nothing fetched from elsewhere.
//
//go:embed web
var web embed.FS

// routePages adds the web pages (/, /users/:id, /learners) and their
// assets (/web/...).
func routePages(e *gin.Engine) {
	page := func(name string) gin.HandlerFunc {
		body, err := web.ReadFile("web/" + name)
		if err != nil {
			panic(err) // embedded at build time: only a typo can miss
		}
		return func(c *gin.Context) { c.Data(http.StatusOK, "text/html; charset=utf-8", body) }
	}
	e.GET("/", page("index.html"))
	e.GET("/users/:id", page("user.html"))
	e.GET("/learners", page("learners.html"))
	assets, _ := fs.Sub(web, "web") // cannot fail: "web" is a valid path
	e.StaticFS("/web", http.FS(assets))
}
