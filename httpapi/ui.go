package httpapi

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"time"

	"github.com/kuebus/kuebus/bus"
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

// signOut is the header's sign-out control, on the page of a server with
// a login form (a token or users), where a browser holds a session cookie
// to end. A plain form
// post: it needs no script, and the page's CSP allows it (form-action
// 'self').
const signOut = `<form method="post" action="logout" class="signout"><button type="submit">Sign out</button></form>
</header>`

// indexHandler serves the dashboard's page at /. The page routes itself by
// the URL's fragment (#/jobs/failed, #/job/42), so / is its only path.
func (s *Server) indexHandler() http.Handler {
	page, err := fs.ReadFile(uiFS, "index.html")
	if err != nil {
		panic(err) // embedded: it is there
	}
	if s.cfg.Auth.forms() {
		page = bytes.Replace(page, []byte("</header>"), []byte(signOut), 1)
	}
	// A user whose role may change no job (a viewer, say) gets the page
	// read-only: the script draws no button that would only be refused.
	readOnly := bytes.Replace(page, []byte(`<body data-live="0">`), []byte(`<body data-live="0" data-readonly="1">`), 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		body := page
		if p, ok := principalOf(r); ok && !p.role.MayCall(bus.MethodSetState) {
			body = readOnly
		}
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(body))
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
