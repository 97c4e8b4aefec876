package httpapi

import (
	"net/http"
	"strings"
)

// routes builds the server's handler: every route of docs/http.md on one
// ServeMux, behind auth and the cross-origin check.
func (s *Server) routes() http.Handler {
	api := http.NewServeMux()
	handle := func(pattern string, fn func(http.ResponseWriter, *http.Request) error) {
		api.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := fn(w, r); err != nil {
				s.writeError(w, r, err)
			}
		})
	}
	// Kue's REST API (read.go, write.go).
	handle("GET /stats", s.getStats)
	handle("GET /history", s.history)
	handle("GET /workers", s.workers)
	handle("GET /job/types", s.getTypes)
	handle("GET /job/{id}", s.getJob)
	handle("GET /job", s.getJobByKey)
	// Search (search.go): Kue's /job/search was taken for the job id
	// "search"; the literal segment wins over {id} and {path...}.
	handle("GET /job/search", s.kueSearch)
	handle("GET /jobs/search", s.searchJobs)
	handle("GET /job/{id}/log", s.getLog)
	// /jobs/[TYPE/][STATE/]FROM..TO[/ORDER]: which segment is which is only
	// known from where the range is, so one route parses them all.
	handle("GET /jobs/{path...}", s.getJobs)
	handle("GET /jobs", s.getJobPage)
	handle("POST /job", s.createJobs)
	handle("DELETE /job/{id}", s.removeJob)
	handle("PUT /job/{id}/state/{state}", s.setState)
	handle("PUT /job/{id}/priority/{priority}", s.setPriority)
	handle("POST /job/{id}/cancel", s.cancelJob)
	handle("POST /jobs/bulk", s.bulk)
	handle("POST /job/{id}/log", s.addLog)
	// Pause and resume a type (pause.go).
	handle("PUT /types/{type}/pause", s.pauseType)
	handle("PUT /types/{type}/resume", s.resumeType)
	// Schedules (schedules.go).
	handle("GET /schedules", s.listSchedules)
	handle("GET /schedules/{name}", s.getSchedule)
	handle("PUT /schedules/{name}", s.putSchedule)
	handle("DELETE /schedules/{name}", s.removeSchedule)
	// Pop and finish for clients without NATS (lease.go).
	handle("POST /pop", s.pop)
	handle("POST /job/{id}/complete", s.leaseOp(s.complete))
	handle("POST /job/{id}/fail", s.leaseOp(s.fail))
	handle("POST /job/{id}/touch", s.leaseOp(s.touch))
	handle("POST /job/{id}/release", s.leaseOp(s.release))
	handle("POST /job/{id}/rejoin", s.leaseOp(s.rejoin))
	handle("POST /job/{id}/progress", s.leaseOp(s.progress))
	// Live events and the dashboard's page.
	api.HandleFunc("GET /events", s.events)
	api.Handle("GET /{$}", s.indexHandler())

	mux := http.NewServeMux()
	mux.Handle("/", s.require(&s.cfg.Auth, jsonNotFound(api)))
	// The dashboard's static files hold no data; the login page needs them.
	mux.Handle("GET /assets/", assetHandler())
	if s.cfg.Auth.Token != "" {
		mux.HandleFunc("GET /login", s.login)
		mux.HandleFunc("POST /login", s.login)
		mux.HandleFunc("POST /logout", s.logout)
	}
	if s.cfg.MetricsHandler != nil {
		mux.Handle("GET /metrics", s.require(s.cfg.MetricsAuth, s.cfg.MetricsHandler))
	}
	// Browsers must not be tricked into changing jobs from another site
	// (basic auth and the cookie are sent along by the browser): refuse
	// unsafe cross-origin requests. curl and other non-browser clients send
	// no Sec-Fetch-Site or Origin and pass.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, errorBody{Error: errorDetail{Code: codeForbidden,
			Message: r.Method + " " + r.URL.Path + " from another site's page is refused: browsers may change jobs from the dashboard only"}})
	}))
	return s.mount(cop.Handler(mux))
}

// jsonNotFound answers requests that match no route with the JSON error
// body instead of ServeMux's plain text: 404 with the path, or 405 with the
// methods the path takes.
func jsonNotFound(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// Let the mux's own handler decide between 404 and 405 (and set
		// Allow), then replace its text body.
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		status := rec.status
		msg := "no route " + r.Method + " " + r.URL.Path + " (see docs/http.md)"
		if status == http.StatusMethodNotAllowed {
			allow := rec.header.Get("Allow")
			w.Header().Set("Allow", allow)
			msg = r.URL.Path + " takes " + strings.ReplaceAll(allow, ",", " or") + ", not " + r.Method
		} else {
			status = http.StatusNotFound
		}
		writeJSON(w, status, errorBody{Error: errorDetail{Code: codeNoRoute, Message: msg}})
	})
}

// statusRecorder keeps the status and headers a handler writes, and drops
// its body.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return len(b), nil
}
func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
