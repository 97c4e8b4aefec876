package bus

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// The Server answers the service discovery requests of the NATS micro
// protocol itself: $SRV.PING, $SRV.INFO and $SRV.STATS, each bare, with the
// service's name, and with its name and id, in micro's own JSON types. So
// `nats micro ls|info|stats` and the micro clients of other languages see
// a kuebus service as any other.
//
// It does not register through micro.AddService because it answers
// requests from goroutines of its own (a lease may wait a minute, and
// must not hold up the requests behind it): micro counts a request when
// its handler returns, which here is at once, so its STATS showed no
// errors and microseconds for calls that took a second. The Server counts
// each request when it has answered it, with its error and its whole time.

// endpoint is one method's entry in INFO and STATS.
type endpoint struct {
	mu    sync.Mutex
	stats micro.EndpointStats
}

// record counts one answered request: its time from arrival to reply, and
// its error message when it failed.
func (e *endpoint) record(took time.Duration, errMsg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats.NumRequests++
	e.stats.ProcessingTime += took
	e.stats.AverageProcessingTime = e.stats.ProcessingTime / time.Duration(e.stats.NumRequests)
	if errMsg != "" {
		e.stats.NumErrors++
		e.stats.LastError = errMsg
	}
}

func (e *endpoint) snapshot() *micro.EndpointStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.stats
	return &st
}

// identity is the service's name, id, version and metadata, as every
// discovery reply carries them.
func (s *Server) identity() micro.ServiceIdentity {
	return micro.ServiceIdentity{Name: s.cfg.Name, ID: s.id, Version: s.cfg.Version, Metadata: s.cfg.Metadata}
}

// subscribeDiscovery answers the three verbs on their three subjects each.
// Every instance answers (no queue group): the reply count is the instance
// count.
func (s *Server) subscribeDiscovery() error {
	for _, verb := range []micro.Verb{micro.PingVerb, micro.InfoVerb, micro.StatsVerb} {
		for _, subject := range []struct{ name, id string }{{"", ""}, {s.cfg.Name, ""}, {s.cfg.Name, s.id}} {
			subj, err := micro.ControlSubject(verb, subject.name, subject.id)
			if err != nil {
				return fmt.Errorf("bus: discovery subject: %w", err)
			}
			sub, err := s.nc.Subscribe(subj, func(m *nats.Msg) { s.discover(verb, m) })
			if err != nil {
				return fmt.Errorf("bus: subscribe %s: %w", subj, err)
			}
			s.subs = append(s.subs, sub)
		}
	}
	return nil
}

// discover answers one discovery request.
func (s *Server) discover(verb micro.Verb, m *nats.Msg) {
	var reply any
	switch verb {
	case micro.PingVerb:
		reply = micro.Ping{ServiceIdentity: s.identity(), Type: micro.PingResponseType}
	case micro.InfoVerb:
		info := micro.Info{ServiceIdentity: s.identity(), Type: micro.InfoResponseType, Description: s.cfg.Description,
			Endpoints: []micro.EndpointInfo{}}
		for _, e := range s.endpointList() {
			info.Endpoints = append(info.Endpoints, micro.EndpointInfo{Name: e.stats.Name, Subject: e.stats.Subject, QueueGroup: e.stats.QueueGroup})
		}
		reply = info
	case micro.StatsVerb:
		st := micro.Stats{ServiceIdentity: s.identity(), Type: micro.StatsResponseType, Started: s.started,
			Endpoints: []*micro.EndpointStats{}}
		for _, e := range s.endpointList() {
			st.Endpoints = append(st.Endpoints, e.snapshot())
		}
		reply = st
	}
	data, err := json.Marshal(reply)
	if err != nil {
		s.logger.Error("discovery reply not encoded", "verb", verb.String(), "err", err)
		return
	}
	if err := m.Respond(data); err != nil {
		s.logger.Warn("discovery reply not sent", "verb", verb.String(), "err", err)
	}
}

// endpointList is the endpoints added so far, in the order they were.
func (s *Server) endpointList() []*endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*endpoint(nil), s.endpoints...)
}
