package httpapi

import (
	"net/http"

	"github.com/kuebus/kuebus/core"
)

// depsReply is GET /job/{id}/deps: the jobs the job depends on (with
// their results) and the jobs that wait or waited for it, each with its
// type and state. The dashboard's job page shows both.
type depsReply struct {
	Dependencies []core.DepJob `json:"dependencies"`
	Dependents   []core.DepJob `json:"dependents"`
}

func (s *Server) getDeps(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	deps, err := s.core.Dependencies(r.Context(), id)
	if err != nil {
		return err
	}
	dependents, err := s.core.Dependents(r.Context(), id)
	if err != nil {
		return err
	}
	if deps == nil {
		deps = []core.DepJob{}
	}
	if dependents == nil {
		dependents = []core.DepJob{}
	}
	writeJSON(w, http.StatusOK, depsReply{Dependencies: deps, Dependents: dependents})
	return nil
}

// createFlow is POST /flow: create_flow's request as the body, its reply
// as the answer (docs/protocol.md).
func (s *Server) createFlow(w http.ResponseWriter, r *http.Request) error {
	var req core.FlowRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	reply, err := s.core.CreateFlow(r.Context(), req.Jobs...)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, reply)
	return nil
}
