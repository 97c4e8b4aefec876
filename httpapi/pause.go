package httpapi

import (
	"net/http"
)

// paused is the reply of PUT /types/{type}/pause and …/resume: Kue's
// message, the type, and whether it is paused now (as core's pause and
// resume answer).
type paused struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Paused  bool   `json:"paused"`
}

// pauseType is PUT /types/{type}/pause: the type's jobs stay and new
// ones are taken, but none is leased until it is resumed. Pausing a paused
// type changes nothing and answers the same.
func (s *Server) pauseType(w http.ResponseWriter, r *http.Request) error {
	jobType := r.PathValue("type")
	if err := s.core.Pause(r.Context(), jobType); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, paused{Message: "paused", Type: jobType, Paused: true})
	return nil
}

// resumeType is PUT /types/{type}/resume.
func (s *Server) resumeType(w http.ResponseWriter, r *http.Request) error {
	jobType := r.PathValue("type")
	if err := s.core.Resume(r.Context(), jobType); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, paused{Message: "resumed", Type: jobType, Paused: false})
	return nil
}
