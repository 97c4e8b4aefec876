package httpapi

import (
	"net/http"

	"github.com/kuebus/kuebus/core"
)

// A type's policy (core's type_set, type_get, type_list) and explain, over
// HTTP: the dashboard's job page asks GET /job/{id}/why.

// getTypePolicies is GET /types/policy: every type that has a policy.
func (s *Server) getTypePolicies(w http.ResponseWriter, r *http.Request) error {
	list, err := s.core.ListTypes(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, core.TypePoliciesReply{Types: list})
	return nil
}

// getTypePolicy is GET /types/{type}/policy: {"type":T} when it has none.
func (s *Server) getTypePolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.core.GetType(r.Context(), r.PathValue("type"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// putTypePolicy is PUT /types/{type}/policy: the body is the policy, its
// type the path's (or left out).
func (s *Server) putTypePolicy(w http.ResponseWriter, r *http.Request) error {
	var p core.TypePolicy
	if err := s.decodeBody(w, r, &p); err != nil {
		return err
	}
	jobType := r.PathValue("type")
	if p.Type != "" && p.Type != jobType {
		return badRequest("type: %q is not the path's %q", p.Type, jobType)
	}
	p.Type = jobType
	stored, err := s.core.SetType(r.Context(), &p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, stored)
	return nil
}

// explainJob is GET /job/{id}/why: why the job is not running.
func (s *Server) explainJob(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ex, err := s.core.Explain(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ex)
	return nil
}
