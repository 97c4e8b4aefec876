package httpapi

import (
	"net/http"
	"strings"

	"github.com/kuebus/kuebus/bus"
)

// route is one route of the server and what it asks of who calls it.
type route struct {
	pattern string
	// anonymous routes need no credentials: the login page, its sign-out
	// twin and the dashboard's static files. Every other route needs them
	// when the server has auth.
	anonymous bool
	need      need
}

// routes builds the server's handler: every route of docs/http.md on one
// ServeMux, behind auth, each route's role check, and the cross-origin
// check. Each route is in s.table, so a test can try them all.
func (s *Server) routes() http.Handler {
	api := http.NewServeMux()
	add := func(pattern string, n need, h http.Handler) {
		s.table = append(s.table, route{pattern: pattern, need: n})
		api.Handle(pattern, s.allow(n, h))
	}
	// handle adds a route calling methods of core: who calls it needs a
	// role that may call each of them.
	handle := func(pattern string, fn func(http.ResponseWriter, *http.Request) error, methods ...string) {
		add(pattern, need{methods: methods}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := fn(w, r); err != nil {
				s.writeError(w, r, err)
			}
		}))
	}
	// Kue's REST API (read.go, write.go).
	handle("GET /stats", s.getStats, bus.MethodStats)
	handle("GET /history", s.history, bus.MethodHistory)
	handle("GET /workers", s.workers, bus.MethodWorkers)
	handle("GET /job/types", s.getTypes, bus.MethodTypes)
	handle("GET /job/{id}", s.getJob, bus.MethodGet)
	handle("GET /job", s.getJobByKey, bus.MethodGet)
	// Search (search.go): Kue's /job/search was taken for the job id
	// "search"; the literal segment wins over {id} and {path...}.
	handle("GET /job/search", s.kueSearch, bus.MethodSearch)
	handle("GET /jobs/search", s.searchJobs, bus.MethodSearch)
	handle("GET /jobs/errors", s.failedErrors, bus.MethodFailedErrors)
	handle("GET /job/{id}/log", s.getLog, bus.MethodLog)
	// Dependencies and flows (deps.go).
	handle("GET /job/{id}/deps", s.getDeps, bus.MethodDependencies, bus.MethodDependents)
	handle("POST /flow", s.createFlow, bus.MethodCreateFlow)
	// /jobs/[TYPE/][STATE/]FROM..TO[/ORDER]: which segment is which is only
	// known from where the range is, so one route parses them all.
	handle("GET /jobs/{path...}", s.getJobs, bus.MethodRange)
	handle("GET /jobs", s.getJobPage, bus.MethodRange)
	handle("POST /job", s.createJobs, bus.MethodCreate, bus.MethodCreateBulk)
	handle("DELETE /job/{id}", s.removeJob, bus.MethodRemove)
	handle("PUT /job/{id}/state/{state}", s.setState, bus.MethodSetState)
	handle("PUT /job/{id}/priority/{priority}", s.setPriority, bus.MethodSetPriority)
	handle("POST /job/{id}/cancel", s.cancelJob, bus.MethodCancel)
	handle("POST /jobs/bulk", s.bulk, bus.MethodBulk)
	handle("POST /job/{id}/log", s.addLog, bus.MethodAddLog)
	// Pause and resume a type (pause.go).
	handle("PUT /types/{type}/pause", s.pauseType, bus.MethodPause)
	handle("PUT /types/{type}/resume", s.resumeType, bus.MethodResume)
	// A type's policy, and why a job is not running (policy.go).
	handle("GET /types/policy", s.getTypePolicies, bus.MethodTypeList)
	handle("GET /types/{type}/policy", s.getTypePolicy, bus.MethodTypeGet)
	handle("PUT /types/{type}/policy", s.putTypePolicy, bus.MethodTypeSet)
	handle("GET /job/{id}/why", s.explainJob, bus.MethodExplain)
	// Schedules (schedules.go).
	handle("GET /schedules", s.listSchedules, bus.MethodScheduleList)
	handle("GET /schedules/{name}", s.getSchedule, bus.MethodScheduleList)
	handle("PUT /schedules/{name}", s.putSchedule, bus.MethodScheduleSet)
	handle("DELETE /schedules/{name}", s.removeSchedule, bus.MethodScheduleRemove)
	handle("POST /schedules/{name}/run", s.runSchedule, bus.MethodScheduleRun)
	// Pop and finish for clients without NATS (lease.go).
	handle("POST /pop", s.pop, bus.MethodLease, bus.MethodRelease)
	handle("POST /job/{id}/complete", s.leaseOp(s.complete), bus.MethodComplete)
	handle("POST /job/{id}/fail", s.leaseOp(s.fail), bus.MethodFail)
	handle("POST /job/{id}/touch", s.leaseOp(s.touch), bus.MethodTouch)
	handle("POST /job/{id}/release", s.leaseOp(s.release), bus.MethodRelease)
	handle("POST /job/{id}/rejoin", s.leaseOp(s.rejoin), bus.MethodRejoin)
	handle("POST /job/{id}/progress", s.leaseOp(s.progress), bus.MethodProgress)
	// Live events, and the dashboard's page, which holds no data: anyone
	// signed in may load it (it asks for the rest by the routes above).
	add("GET /events", need{events: true}, http.HandlerFunc(s.events))
	add("GET /{$}", need{}, s.indexHandler())

	mux := http.NewServeMux()
	open := func(pattern string, h http.Handler) {
		s.table = append(s.table, route{pattern: pattern, anonymous: true})
		mux.Handle(pattern, h)
	}
	mux.Handle("/", s.require(&s.cfg.Auth, jsonNotFound(api)))
	// The dashboard's static files hold no data; the login page needs them.
	open("GET /assets/", assetHandler())
	if s.cfg.Auth.forms() {
		open("GET /login", http.HandlerFunc(s.login))
		open("POST /login", http.HandlerFunc(s.login))
		open("POST /logout", http.HandlerFunc(s.logout))
	}
	if s.cfg.MetricsHandler != nil {
		// Aggregate counts: whoever may read the stats.
		n := need{methods: []string{bus.MethodStats}}
		s.table = append(s.table, route{pattern: "GET /metrics", anonymous: !s.cfg.MetricsAuth.Enabled(), need: n})
		mux.Handle("GET /metrics", s.require(s.cfg.MetricsAuth, s.allow(n, s.cfg.MetricsHandler)))
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
