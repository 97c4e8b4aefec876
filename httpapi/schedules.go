package httpapi

import (
	"fmt"
	"net/http"

	"github.com/kuebus/kuebus/core"
)

// The schedules (protocol §3.31–§3.33) as REST: GET /schedules lists them,
// GET, PUT and DELETE /schedules/{name} read, set and remove one.

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) error {
	list, err := s.core.Schedules(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []core.Schedule{}
	}
	writeJSON(w, http.StatusOK, core.SchedulesReply{Schedules: list})
	return nil
}

// getSchedule is GET /schedules/{name}: one schedule, or 404.
func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	list, err := s.core.Schedules(r.Context())
	if err != nil {
		return err
	}
	for _, sc := range list {
		if sc.Name == name {
			writeJSON(w, http.StatusOK, sc)
			return nil
		}
	}
	return &httpError{status: http.StatusNotFound, code: "not_found", msg: fmt.Sprintf("schedule %q not found", name)}
}

// putSchedule is PUT /schedules/{name}: schedule_set's body, whose name,
// when given, must be the path's. Core checks the rest.
func (s *Server) putSchedule(w http.ResponseWriter, r *http.Request) error {
	var req core.ScheduleSetRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	if req.Name != "" && req.Name != name {
		return badRequest("name: %q is not the path's %q", req.Name, name)
	}
	req.Name = name
	sc, err := s.core.SetSchedule(r.Context(), &req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sc)
	return nil
}

func (s *Server) removeSchedule(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := s.core.RemoveSchedule(r.Context(), name); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changed{Message: fmt.Sprintf("schedule %s removed", name)})
	return nil
}

// runSchedule is POST /schedules/:name/run: core's schedule_run, the
// schedule's job made now ("run now"), 201 with the job; the next tick
// stays.
func (s *Server) runSchedule(w http.ResponseWriter, r *http.Request) error {
	job, err := s.core.RunSchedule(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, job)
	return nil
}
