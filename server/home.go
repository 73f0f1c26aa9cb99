package server

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
)

// web holds the pages (pages/: the layout and each page's title and main
// element) and their assets (static/: plain CSS and JS calling the /v1
// API): no build step, nothing fetched from elsewhere.
//
//go:embed web
var web embed.FS

// routePages adds the web pages (/, /users/:id, /learners) and their
// assets (/web/...).
func routePages(e *gin.Engine) {
	// page renders a page once: the layout around pages/name.html, with the
	// script static/name.js.
	page := func(name string) gin.HandlerFunc {
		t := template.Must(template.ParseFS(web, "web/pages/layout.html", "web/pages/"+name+".html"))
		var body bytes.Buffer
		if err := t.Execute(&body, name+".js"); err != nil {
			panic(err) // embedded at build time: only a broken template can fail
		}
		return func(c *gin.Context) { c.Data(http.StatusOK, "text/html; charset=utf-8", body.Bytes()) }
	}
	e.GET("/", page("search"))
	e.GET("/users/:id", page("user"))
	e.GET("/learners", page("learners"))
	static, _ := fs.Sub(web, "web/static") // cannot fail: a valid path
	e.StaticFS("/web", noDirs{http.FS(static)})
}

// noDirs serves the files of a file system but not its directories, which
// http.FileServer would list.
type noDirs struct{ http.FileSystem }

func (d noDirs) Open(name string) (http.File, error) {
	f, err := d.FileSystem.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || st.IsDir() {
		f.Close()
		return nil, fs.ErrNotExist
	}
	return f, nil
}
