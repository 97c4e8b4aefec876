package httpapi

import (
	"net/http"

	"github.com/kuebus/kuebus/core"
)

// history is GET /history[?type=T][&minutes=N | &hours=N]: core's counts
// per minute (or hour) of jobs created, started, completed and failed, the
// wait p95 and the waiting jobs, {"step":ms,"minutes":[...]}, the
// dashboard's chart.
func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	qs := r.URL.Query()
	req := core.HistoryRequest{Type: qs.Get("type")}
	// in a fixed order: when both are bad, the error names minutes
	if err := queryInt(qs, "minutes", &req.Minutes); err != nil {
		return err
	}
	if err := queryInt(qs, "hours", &req.Hours); err != nil {
		return err
	}
	reply, err := s.core.History(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reply)
	return nil
}

// workers is GET /workers: core's list of live workers, {"workers":[...]},
// each with its last heartbeat and when it was heard.
func (s *Server) workers(w http.ResponseWriter, r *http.Request) error {
	list, err := s.core.Workers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, core.WorkersReply{Workers: list})
	return nil
}
