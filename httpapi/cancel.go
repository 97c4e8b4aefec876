package httpapi

import (
	"fmt"
	"net/http"
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
