package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kuebus/kuebus/core"
)

// changed is the reply of a change to one job: Kue's message, and the job
// as it is now (without data: core's set_state and set_priority leave it out).
type changed struct {
	Message string    `json:"message"`
	Job     *core.Job `json:"job,omitempty"`
}

func (s *Server) removeJob(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	job, err := s.core.Remove(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changed{Message: fmt.Sprintf("job %d removed", id), Job: job})
	return nil
}

// setState is PUT /job/{id}/state/{state}: a person's move. A failed job set
// to inactive runs again (the dashboard's retry).
func (s *Server) setState(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	state, err := core.ParseState(r.PathValue("state"))
	if err != nil {
		return badRequest("state: %v", err)
	}
	job, err := s.core.SetState(r.Context(), id, state)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changed{Message: "updated state", Job: job})
	return nil
}

// setPriority is PUT /job/{id}/priority/{priority}: a name (low, normal,
// medium, high, critical) or an integer.
func (s *Server) setPriority(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := core.ParsePriority(r.PathValue("priority"))
	if err != nil {
		return badRequest("priority: %v", err)
	}
	job, err := s.core.SetPriority(r.Context(), id, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changed{Message: "updated priority", Job: job})
	return nil
}

// addLog is POST /job/{id}/log: {"line":"..."}, or a text/plain body that
// is the line itself.
func (s *Server) addLog(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var req struct {
		Line *string `json:"line"`
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		body, err := s.readBody(w, r)
		if err != nil {
			return err
		}
		line := string(body)
		req.Line = &line
	} else if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.Line == nil {
		return badRequest(`line: missing: send {"line":"..."} or a text/plain body`)
	}
	if err := s.core.AddLog(r.Context(), id, *req.Line); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changed{Message: "log line added"})
	return nil
}
