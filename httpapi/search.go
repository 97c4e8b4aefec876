package httpapi

import (
	"net/http"

	"github.com/kuebus/kuebus/core"
)

// searchRequest reads a search from the query: q, and optional type,
// state, limit and cursor, checked by core.
func searchRequest(r *http.Request) (core.SearchRequest, error) {
	qs := r.URL.Query()
	req := core.SearchRequest{Q: qs.Get("q"), Type: qs.Get("type"), State: core.State(qs.Get("state")), Cursor: qs.Get("cursor"),
		Error: qs.Get("error"), ErrorGroup: qs.Get("error_group")}
	return req, queryInt(qs, "limit", &req.Limit)
}

// searchJobs is GET /jobs/search?q=TEXT[&type=T][&state=S][&error=E][&error_group=G][&limit=N][&cursor=C]:
// one page of core's search, {"jobs":[...],"cursor":C}.
func (s *Server) searchJobs(w http.ResponseWriter, r *http.Request) error {
	req, err := searchRequest(r)
	if err != nil {
		return err
	}
	page, err := s.core.Search(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// kueSearchCalls bounds the core calls of one GET /job/search: each looks
// at core.SearchBudget jobs at most.
const kueSearchCalls = 10

// kueSearch is Kue's GET /job/search?q=TEXT: a bare array of the ids of
// the jobs found, as Kue answered. It follows core's cursor for up to
// kueSearchCalls calls (so it looks at no more than 10 000 jobs) or until
// limit ids are found; GET /jobs/search pages through the rest.
func (s *Server) kueSearch(w http.ResponseWriter, r *http.Request) error {
	req, err := searchRequest(r)
	if err != nil {
		return err
	}
	ids := []int64{}
	for range kueSearchCalls {
		page, err := s.core.Search(r.Context(), req)
		if err != nil {
			return err
		}
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
		}
		if page.Cursor == "" || (req.Limit > 0 && len(ids) >= req.Limit) {
			break
		}
		req.Cursor = page.Cursor
		if req.Limit > 0 {
			req.Limit -= len(page.Jobs)
		}
	}
	writeJSON(w, http.StatusOK, ids)
	return nil
}

// failedErrors is GET /jobs/errors?type=T[&limit=N]: core's failed_errors,
// a type's newest failed jobs grouped by error, the dashboard's Errors
// view.
func (s *Server) failedErrors(w http.ResponseWriter, r *http.Request) error {
	qs := r.URL.Query()
	req := core.FailedErrorsRequest{Type: qs.Get("type")}
	if err := queryInt(qs, "limit", &req.Limit); err != nil {
		return err
	}
	reply, err := s.core.FailedErrors(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reply)
	return nil
}
