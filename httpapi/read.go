package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// statsReply is GET /stats: core's stats, plus Kue's field names so that
// scripts written against Kue's /stats keep working.
type statsReply struct {
	core.Stats
	InactiveCount int64 `json:"inactiveCount"`
	CompleteCount int64 `json:"completeCount"`
	ActiveCount   int64 `json:"activeCount"`
	FailedCount   int64 `json:"failedCount"`
	DelayedCount  int64 `json:"delayedCount"`
	WorkTimeKue   int64 `json:"workTime"`
}

// getStats is GET /stats[?partial=true]. Plain, it fails whole (503) when
// some type's Redis shard is down, as core.stats {} does; with partial it
// answers the types core could read and names the others in type_errors
// (docs/protocol.md §3.12). The dashboard asks for partial.
func (s *Server) getStats(w http.ResponseWriter, r *http.Request) error {
	read := s.core.Stats
	if v := r.URL.Query().Get("partial"); v != "" {
		partial, err := strconv.ParseBool(v)
		if err != nil {
			return badRequest("partial: %q is not true or false", v)
		}
		if partial {
			read = s.core.StatsPartial
		}
	}
	st, err := read(r.Context())
	if err != nil {
		return err
	}
	if st.Types == nil {
		st.Types = map[string]core.StateCounts{}
	}
	writeJSON(w, http.StatusOK, statsReply{
		Stats:         *st,
		InactiveCount: st.Inactive, CompleteCount: st.Complete, ActiveCount: st.Active,
		FailedCount: st.Failed, DelayedCount: st.Delayed, WorkTimeKue: st.WorkTime,
	})
	return nil
}

func (s *Server) getTypes(w http.ResponseWriter, r *http.Request) error {
	types, err := s.core.Types(r.Context())
	if err != nil {
		return err
	}
	if types == nil {
		types = []string{}
	}
	writeJSON(w, http.StatusOK, types) // Kue answers a bare array
	return nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	job, err := s.core.Get(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, job)
	return nil
}

// getJobByKey is GET /job?type=TYPE&unique_key=KEY: the unfinished job of
// the type that holds the key, as GET /job/{id} answers it.
func (s *Server) getJobByKey(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	jobType, key := q.Get("type"), q.Get("unique_key")
	if jobType == "" && key == "" {
		return badRequest("type, unique_key: missing: GET /job?type=TYPE&unique_key=KEY")
	}
	job, err := s.core.GetByKey(r.Context(), jobType, key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, job)
	return nil
}

func (s *Server) getLog(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("entries") == "1" {
		// The lines with their times, as core's log answers them: the
		// dashboard shows when each line was added.
		entries, err := s.core.LogEntries(r.Context(), id)
		if err != nil {
			return err
		}
		if entries == nil {
			entries = []core.LogEntry{}
		}
		writeJSON(w, http.StatusOK, map[string][]core.LogEntry{"entries": entries})
		return nil
	}
	lines, err := s.core.Log(r.Context(), id)
	if err != nil {
		return err
	}
	if lines == nil {
		lines = []string{}
	}
	writeJSON(w, http.StatusOK, lines) // Kue answers a bare array
	return nil
}

// getJobs is Kue's three range routes in one:
//
//	GET /jobs/FROM..TO[/ORDER]
//	GET /jobs/STATE/FROM..TO[/ORDER]
//	GET /jobs/TYPE/STATE/FROM..TO[/ORDER]
//
// The reply is a bare array of jobs, as Kue's.
func (s *Server) getJobs(w http.ResponseWriter, r *http.Request) error {
	req, err := parseJobsPath(r.PathValue("path"))
	if err != nil {
		return err
	}
	reply, err := s.core.RangePage(r.Context(), req)
	if err != nil {
		return err
	}
	if reply.Jobs == nil {
		reply.Jobs = []core.Job{}
	}
	if reply.Next > 0 {
		// The jobs did not all fit one core reply: the body keeps Kue's bare
		// array, and this header says where the rest starts.
		w.Header().Set(HeaderRangeNext, strconv.FormatInt(reply.Next, 10))
	}
	if reply.Cursor != "" {
		w.Header().Set(HeaderRangeCursor, reply.Cursor)
	}
	if reply.Back != "" {
		w.Header().Set(HeaderRangeBack, reply.Back)
	}
	writeJSON(w, http.StatusOK, reply.Jobs)
	return nil
}

// The headers of a GET /jobs/… reply beside Kue's bare array.
const (
	// HeaderRangeNext is set on a reply that holds fewer jobs than asked
	// because they did not fit one message: the position to ask from next.
	HeaderRangeNext = "Kuebus-Range-Next"
	// HeaderRangeCursor is the range's cursor (core.JobsReply.Cursor):
	// GET /jobs?cursor=C reads the jobs after the page, at any depth.
	HeaderRangeCursor = "Kuebus-Range-Cursor"
	// HeaderRangeBack is the range's back cursor (core.JobsReply.Back).
	HeaderRangeBack = "Kuebus-Range-Back"
)

// pageReply is GET /jobs: a page by cursor, core's range reply without
// next (a page cut to fit one message goes on from its cursor).
type pageReply struct {
	Jobs   []core.Job `json:"jobs"`
	Cursor string     `json:"cursor,omitempty"`
	Back   string     `json:"back,omitempty"`
}

// getJobPage is GET /jobs?[state=S][&type=T][&order=O][&limit=N][&cursor=C]:
// one page by cursor of core's range, {"jobs":[…],"cursor":C,"back":B}.
// Without a cursor it starts at the beginning; without a limit it holds
// core.RangeLimitDefault jobs. It costs the same at any depth, where
// Kue's /jobs/FROM..TO of every type stops at core.MaxUntypedPosition.
func (s *Server) getJobPage(w http.ResponseWriter, r *http.Request) error {
	qs := r.URL.Query()
	req := core.RangeRequest{Type: qs.Get("type"), Order: core.Order(qs.Get("order")), Cursor: qs.Get("cursor"), Limit: core.RangeLimitDefault}
	if st := qs.Get("state"); st != stateAll {
		req.State = core.State(st) // core checks it
	}
	if raw := qs.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return badRequest("limit: %q is not a number of jobs from 1 to %d", raw, core.MaxRangeSize)
		}
		req.Limit = n
	}
	reply, err := s.core.RangePage(r.Context(), req)
	if err != nil {
		return err
	}
	page := pageReply{Jobs: reply.Jobs, Cursor: reply.Cursor, Back: reply.Back}
	if page.Jobs == nil {
		page.Jobs = []core.Job{}
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// jobsUsage is the shape of /jobs paths, for error messages.
const jobsUsage = "expected /jobs/[TYPE/][STATE/]FROM..TO[/ORDER]"

// stateAll in a /jobs path means "any state", so that the dashboard can list
// one type over all states: /jobs/email/all/0..9.
const stateAll = "all"

// parseJobsPath reads the segments after /jobs/. The range FROM..TO is the
// anchor: what comes before it is [TYPE/]STATE, what comes after it ORDER.
func parseJobsPath(path string) (core.RangeRequest, error) {
	var req core.RangeRequest
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	at := -1
	for i, seg := range segs {
		if strings.Contains(seg, "..") {
			at = i
			break
		}
	}
	switch {
	case at < 0:
		return req, badRequest("range: no FROM..TO in /jobs/%s: %s", path, jobsUsage)
	case at > 2 || len(segs)-at > 2:
		return req, badRequest("path: /jobs/%s has %d segments: %s", path, len(segs), jobsUsage)
	}
	var err error
	if req.From, req.To, err = parseRange(segs[at]); err != nil {
		return req, err
	}
	if at >= 1 {
		if st := segs[at-1]; st != stateAll {
			if req.State, err = core.ParseState(st); err != nil {
				return req, badRequest("state: %q is not a state (%s, or %s)", st, stateNames(), stateAll)
			}
		}
	}
	if at == 2 {
		req.Type = segs[0]
		if err := bus.ValidToken(req.Type); err != nil {
			return req, badRequest("type: %q is not a job type: %v", req.Type, err)
		}
	}
	if at+1 < len(segs) {
		switch o := core.Order(segs[at+1]); o {
		case core.OrderAsc, core.OrderDesc:
			req.Order = o
		default:
			return req, badRequest("order: %q is not asc or desc", segs[at+1])
		}
	}
	return req, nil
}

// parseRange reads FROM..TO: 0-based positions, both inclusive, at most
// core.MaxRangeSize jobs.
func parseRange(seg string) (from, to int64, err error) {
	a, b, _ := strings.Cut(seg, "..")
	if from, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, badRequest("range %q: from %q is not a number", seg, a)
	}
	if to, err = strconv.ParseInt(b, 10, 64); err != nil {
		return 0, 0, badRequest("range %q: to %q is not a number", seg, b)
	}
	switch {
	case from < 0:
		return 0, 0, badRequest("range %q: from %d is negative", seg, from)
	case to < from:
		return 0, 0, badRequest("range %q: to %d is before from %d", seg, to, from)
	case to-from >= core.MaxRangeSize:
		return 0, 0, badRequest("range %q: more than %d jobs; ask for at most %d per page", seg, core.MaxRangeSize, core.MaxRangeSize)
	}
	return from, to, nil
}

func stateNames() string {
	names := make([]string, len(core.States))
	for i, st := range core.States {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

// pathID reads the {id} of a route: a positive integer.
func pathID(r *http.Request) (int64, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest("id: %q is not a job id (a positive integer)", raw)
	}
	return id, nil
}
