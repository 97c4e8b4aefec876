package httpapi

import (
	"fmt"
	"net/http"

	"github.com/kuebus/kuebus/core"
)

// cancelJob is POST /job/{id}/cancel, with an optional body
// {"reason":"..."}: the job ends in cancelled and its running handler, if
// any, is told. A finished job is 409 conflict, an unknown one 404.
func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var req struct {
		Reason string `json:"reason"`
	}
	if r.ContentLength != 0 {
		if err := s.decodeBody(w, r, &req); err != nil {
			return err
		}
	}
	job, err := s.core.Cancel(r.Context(), id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changed{Message: fmt.Sprintf("job %d cancelled", id), Job: job})
	return nil
}

// bulk is POST /jobs/bulk: core's bulk request as the body, its reply as
// the answer (one call: send the reply's cursor back while more is true).
func (s *Server) bulk(w http.ResponseWriter, r *http.Request) error {
	var req core.BulkActionRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	reply, err := s.core.Bulk(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reply)
	return nil
}
