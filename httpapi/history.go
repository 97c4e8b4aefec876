package httpapi

import (
	"net/http"
	"strconv"

	"github.com/kuebus/kuebus/core"
)

// history is GET /history[?type=T][&minutes=N]: core's per-minute counts of
// jobs created, completed and failed, {"minutes":[...]}, the dashboard's
// charts.
func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	qs := r.URL.Query()
	req := core.HistoryRequest{Type: qs.Get("type")}
	if raw := qs.Get("minutes"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			return badRequest("minutes: %q is not an integer", raw)
		}
		req.Minutes = n
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
