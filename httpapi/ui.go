package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
)

// The dashboard: plain HTML, CSS and JavaScript, embedded so that the binary
// serves it with nothing fetched from elsewhere. There is no build step; edit
// the files under ui/ and rebuild the binary.
//
//go:embed ui
var uiFiles embed.FS

// uiFS is ui/ itself, so that ui/app.js is served as /assets/app.js.
var uiFS = func() fs.FS {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embed directive guarantees ui/ exists
	}
	return sub
}()

// securityHeaders keeps the dashboard to its own files: no inline scripts,
// nothing from other origins, no framing.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// indexHandler serves the dashboard's page at /. The page routes itself by
// the URL's fragment (#/jobs/failed, #/job/42), so / is its only path.
func (s *Server) indexHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, uiFS, "index.html")
	})
}

// assetHandler serves ui/ under /assets/.
func assetHandler() http.Handler {
	files := http.StripPrefix("/assets/", http.FileServerFS(uiFS))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		// The files change with the binary, and embedded files carry no
		// modification time to revalidate against: ask again each time
		// (they are small).
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
