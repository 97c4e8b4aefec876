package httpapi

import (
	"net/http"

	"github.com/kuebus/kuebus/internal/httprule"
)

// CheckBasePath says what is wrong with a base path (Config.BasePath), or
// nil: "" (none) or "/" followed by segments of letters, digits and
// - _ . ~, without a trailing slash, "." or ".." segments or "//". The
// rule is internal/httprule's, which a node's config applies too.
func CheckBasePath(p string) error { return httprule.BasePath(p) }

// path is a server path under the base path: path("/login") is
// "/admin/queues/login" under /admin/queues.
func (s *Server) path(p string) string { return s.cfg.BasePath + p }

// mount serves h under the base path: BASE/... goes to h with BASE
// stripped, BASE alone redirects to BASE/ (the dashboard's relative links
// need the slash), and any other path is a JSON 404 that says where the
// server is.
func (s *Server) mount(h http.Handler) http.Handler {
	base := s.cfg.BasePath
	if base == "" {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle(base+"/", http.StripPrefix(base, h))
	mux.HandleFunc(base, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+"/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody{Error: errorDetail{Code: codeNoRoute,
			Message: "no route " + r.Method + " " + r.URL.Path + ": this server serves under " + base + "/"}})
	})
	return mux
}
