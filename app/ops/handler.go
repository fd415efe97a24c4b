package ops

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/static"
)

// Database is what the readiness check asks: whether the database answers
// and its file is still the one opened (the store's Ready).
type Database interface {
	Ready(ctx context.Context) error
}

// Handler owns the operator's routes: GET/HEAD /health/live and
// /health/ready at the root of the listener; below the base path
// /openapi.json, /theme.css and /static/*. None of them runs request init:
// no cookies, no CSRF work.
type Handler struct {
	db        Database
	log       *slog.Logger
	basePath  string
	openAPI   []byte // the rendered OpenAPI document (app/openapi)
	themeCSS  []byte // the theme stylesheet, built from the config
	readiness readiness
}

// New builds the handler from what it serves: documents rendered once at
// start-up.
func New(db Database, log *slog.Logger, basePath string, openAPI, themeCSS []byte) *Handler {
	return &Handler{db: db, log: log, basePath: basePath, openAPI: openAPI, themeCSS: themeCSS}
}

// Mount registers the routes.
func (h *Handler) Mount(m web.Mux) {
	m.RootGet("/health/live", h.getLive)
	m.RootGet("/health/ready", h.getReady)
	m.Get("/theme.css", h.getThemeCSS)
	m.Get("/static/*", echo.WrapHandler(http.StripPrefix(h.basePath+"/static/", staticFiles())))
	m.Get("/openapi.json", h.getOpenAPI)
}

var openAPICacheControl = web.HeaderValue("public, max-age=300")

// getOpenAPI answers GET {base}/openapi.json with the rendered document.
func (h *Handler) getOpenAPI(c echo.Context) error {
	c.Response().Header()["Cache-Control"] = openAPICacheControl
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, h.openAPI)
}

// getThemeCSS serves the theme stylesheet; like the static files it may be
// cached for an hour (it changes only with the config).
func (h *Handler) getThemeCSS(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", h.themeCSS)
}

// staticFiles serves the embedded stylesheets and scripts: files only, no
// directory listings, cacheable for an hour.
func staticFiles() http.Handler {
	files := http.FileServer(http.FS(static.Files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}
