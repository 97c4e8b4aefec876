package bus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nuid"

	"github.com/kuebus/kuebus/bus/runner"
)

// ServerConfig configures an RPC server.
type ServerConfig struct {
	// Name is the micro service name, for $SRV discovery. Required.
	Name string
	// Version is the micro service version (semver). Default
	// ProtocolVersion.
	Version string
	// Description is shown by $SRV.INFO. Default "".
	Description string
	// QueueGroup is the queue group every endpoint joins. Default: Name.
	QueueGroup string
	// MaxRequestBytes refuses larger request bodies with invalid. Default:
	// the connection's max payload.
	MaxRequestBytes int
	// MaxInFlight bounds the requests of Handle's endpoints served at
	// once; a request beyond it is answered unavailable at once, so that
	// a flood holds neither goroutines nor a growing NATS pending buffer.
	// Default MaxInFlightDefault (4096).
	MaxInFlight int
	// MaxWaiting bounds the requests of HandleWaiting's endpoints served
	// at once (waiting, or on their way to wait); a request beyond it is
	// answered unavailable at once. Default MaxWaitingDefault (10,240).
	MaxWaiting int
	// Logger receives internal failures. Default: discard.
	Logger *slog.Logger
	// Metadata is shown by $SRV.INFO, for example the subject prefix, so that
	// deployments sharing one NATS can be told apart. Default: none.
	Metadata map[string]string
}

// Server serves RPC methods as endpoints of one micro service. Unlike a plain
// micro handler, each request runs in a goroutine of its own (one that
// served an earlier request: a runner.Pool), so a slow method (a lease that
// waits for work) never holds up the others; the Server answers
// micro's discovery requests itself (discovery.go), counting each request
// when it is answered.
type Server struct {
	nc       *nats.Conn
	cfg      ServerConfig // with its defaults
	id       string       // this instance's, in every discovery reply
	started  time.Time
	maxBytes int
	logger   *slog.Logger

	ctx     context.Context // cancelled when Stop gives up waiting
	cancel  context.CancelFunc
	slots   chan struct{} // one per request of a Handle endpoint in flight
	waiting chan struct{} // one per request of a HandleWaiting endpoint in flight
	runners *runner.Pool  // the goroutines requests run on

	// mu orders adding to wg against Stop's wait: draining subscriptions
	// is asynchronous, so a request can still arrive after Stop has begun.
	// It also guards the lists below.
	mu        sync.Mutex
	stopping  bool
	wg        sync.WaitGroup
	endpoints []*endpoint
	subs      []*nats.Subscription // endpoints' and discovery's
}

// Defaults of ServerConfig.
const (
	MaxInFlightDefault = 4096
	MaxWaitingDefault  = 10_240
)

// Every endpoint's subscription drops what arrives beyond these while its
// messages wait for the callback (nats.go's default, 64 MiB per
// subscription, would let a flood hold that much per endpoint). The
// callback takes a slot or answers unavailable without waiting, so it
// keeps up, and a request dropped here times out at its caller, as it
// would have had the core been down.
const (
	endpointPendingMsgs  = 1 << 16
	endpointPendingBytes = 16 << 20
)

// runnersMaxIdle bounds the runners that wait for requests: enough for
// the requests of a busy core at once, at a few KiB of stack each.
const runnersMaxIdle = 128

// NewServer registers a micro service on nc. Endpoints are added with Handle.
func NewServer(nc *nats.Conn, cfg ServerConfig) (*Server, error) {
	if cfg.Name == "" {
		return nil, errors.New("bus: server needs a name")
	}
	cfg.Version = cmp.Or(cfg.Version, ProtocolVersion)
	cfg.QueueGroup = cmp.Or(cfg.QueueGroup, cfg.Name)
	if cfg.Metadata == nil {
		cfg.Metadata = map[string]string{} // micro's clients expect an object
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		nc:       nc,
		cfg:      cfg,
		id:       nuid.Next(),
		started:  time.Now().UTC(),
		maxBytes: cfg.MaxRequestBytes,
		logger:   cfg.Logger,
		ctx:      ctx,
		cancel:   cancel,
		slots:    make(chan struct{}, cmp.Or(cfg.MaxInFlight, MaxInFlightDefault)),
		waiting:  make(chan struct{}, cmp.Or(cfg.MaxWaiting, MaxWaitingDefault)),
		runners:  runner.NewPool(runnersMaxIdle),
	}
	if s.maxBytes <= 0 {
		s.maxBytes = int(nc.MaxPayload())
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if err := s.subscribeDiscovery(); err != nil {
		s.unsubscribe()
		return nil, err
	}
	return s, nil
}

// Handle registers fn as the endpoint named method on subject. The request
// body is decoded strictly into a Req (see Decode); the reply is fn's result
// as JSON, or its error as micro error headers with the code from CodeOf.
func Handle[Req, Resp any](s *Server, method, subject string, fn func(context.Context, *Req) (*Resp, error)) error {
	return handle(s, method, subject, true, fn)
}

// HandleWaiting is Handle for a method whose requests may wait a long time
// by design (a lease waiting for work): they take no in-flight slot, so that
// many of them never hold up the requests that would end their wait, but
// one of MaxWaiting's. Each still runs in its own goroutine and is waited
// for by Stop.
func HandleWaiting[Req, Resp any](s *Server, method, subject string, fn func(context.Context, *Req) (*Resp, error)) error {
	return handle(s, method, subject, false, fn)
}

func handle[Req, Resp any](s *Server, method, subject string, bounded bool, fn func(context.Context, *Req) (*Resp, error)) error {
	e := &endpoint{stats: micro.EndpointStats{Name: method, Subject: subject, QueueGroup: s.cfg.QueueGroup}}
	slots, busy := s.slots, "requests are served at once already"
	if !bounded {
		slots, busy = s.waiting, "requests wait already"
	}
	h := func(m *nats.Msg) {
		start := time.Now()
		// A slot or an answer now: waiting for a slot here would stop
		// the subscription's callback, and pile the requests behind it
		// up in its pending buffer, memory a flood could grow.
		select {
		case slots <- struct{}{}:
		default:
			s.reply(e, m, start, nil, Errorf(CodeUnavailable, "busy: %d %s; try again later", cap(slots), busy))
			return
		}
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			<-slots
			s.reply(e, m, start, nil, &Error{Code: CodeUnavailable, Message: "service is shutting down"})
			return
		}
		s.wg.Add(1)
		s.mu.Unlock()
		s.runners.Run(func() {
			defer s.wg.Done()
			defer func() { <-slots }()
			s.serve(e, m, start, func(ctx context.Context, body []byte) (any, error) {
				var req Req
				if err := Decode(body, &req); err != nil {
					return nil, err
				}
				return fn(withRequestHeader(ctx, m.Header), &req)
			})
		})
	}
	sub, err := s.nc.QueueSubscribe(subject, s.cfg.QueueGroup, h)
	if err != nil {
		return fmt.Errorf("bus: add endpoint %s on %s: %w", method, subject, err)
	}
	_ = sub.SetPendingLimits(endpointPendingMsgs, endpointPendingBytes) // cannot fail on a new subscription
	s.mu.Lock()
	s.endpoints = append(s.endpoints, e)
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return nil
}

// serve runs one request that arrived at start and sends its reply.
func (s *Server) serve(e *endpoint, m *nats.Msg, start time.Time, fn func(context.Context, []byte) (any, error)) {
	var data []byte
	var err error
	if n := len(m.Data); n > s.maxBytes {
		err = Errorf(CodeInvalid, "body: %d bytes is over the limit of %d", n, s.maxBytes)
	} else {
		data, err = s.run(m.Subject, m.Data, fn)
	}
	if limit := int(s.nc.MaxPayload()) - replyHeadroom; err == nil && len(data) > limit {
		err = Errorf(CodeInvalid, "reply: %d bytes is over the %d a NATS message can carry; ask for fewer or smaller jobs", len(data), limit)
	}
	if err != nil && CodeOf(err) == CodeInternal && !errors.Is(err, errPanicked) {
		s.logger.Error("rpc failed", "subject", m.Subject, "err", err)
	}
	s.reply(e, m, start, data, err)
}

// reply counts the request in its endpoint's stats, then answers m with
// data, or with err as the error headers.
func (s *Server) reply(e *endpoint, m *nats.Msg, start time.Time, data []byte, err error) {
	msg := &nats.Msg{Subject: m.Reply, Data: data}
	errMsg := ""
	if err != nil {
		code := CodeOf(err)
		message := headerSafe(MessageOf(err))
		msg.Data = nil
		msg.Header = errorHeaders(code, message)
		errMsg = string(code) + ": " + message
	}
	// Counted before it is sent: a caller that asks $SRV.STATS once it has
	// its reply must find this request counted (counted after, STATS,
	// served on another goroutine, could answer first).
	e.record(time.Since(start), errMsg)
	if msg.Subject != "" { // else a publish, not a request: nobody waits for the answer
		if perr := s.nc.PublishMsg(msg); perr != nil {
			s.logger.Warn("rpc reply not sent", "subject", m.Subject, "err", perr)
		}
	}
}

// errorHeaders are the headers of a failed call's reply: the code as a
// number for micro clients, as a word for kuebus's, and the message.
func errorHeaders(code Code, message string) nats.Header {
	return nats.Header{
		HeaderErrorCode:  []string{strconv.Itoa(StatusOf(code))},
		HeaderKuebusCode: []string{string(code)},
		HeaderError:      []string{message},
	}
}

// errPanicked is the error a request whose handler panicked answers with.
// The wire gets only this sentence: a stack or a panic value could show
// internals (keys, tokens, data) to whoever sent the request; the log has
// both.
var errPanicked = &Error{Code: CodeInternal, Message: "an internal error happened while serving this request; the service logged it"}

// run calls fn and encodes its reply. A panic in either is recovered into
// errPanicked and logged with its stack: one request, however malformed,
// must never stop the process that serves every other client. The deferred
// releases of the caller (in-flight slot, WaitGroup) run as usual.
func (s *Server) run(subject string, body []byte, fn func(context.Context, []byte) (any, error)) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("rpc handler panicked", "subject", subject, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			data, err = nil, errPanicked
		}
	}()
	reply, err := fn(s.ctx, body)
	if err != nil {
		return nil, err
	}
	return Encode(reply)
}

// replyHeadroom leaves room for the headers of a reply within NATS's max payload.
const replyHeadroom = 4 << 10

// Ready returns once the NATS server knows every endpoint added so far, so
// that a request sent afterwards from any connection finds them.
func (s *Server) Ready() error {
	if err := s.nc.Flush(); err != nil {
		return fmt.Errorf("bus: flush endpoints: %w", err)
	}
	return nil
}

// Stop stops taking requests, waits for the ones in flight until ctx ends,
// then cancels their context and waits for them to return.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	err := s.unsubscribe()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done
	}
	s.cancel()
	s.runners.Close()
	if err != nil {
		return fmt.Errorf("bus: stop service: %w", err)
	}
	return nil
}

// unsubscribe drains every subscription of the server: requests already
// delivered are still handled (and answered unavailable once stopping).
func (s *Server) unsubscribe() error {
	s.mu.Lock()
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	var errs []error
	for _, sub := range subs {
		if err := sub.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, fmt.Errorf("drain %s: %w", sub.Subject, err))
		}
	}
	return errors.Join(errs...)
}

// Client calls RPC methods. It is safe for concurrent use.
type Client struct {
	nc       *nats.Conn
	timeout  time.Duration
	refusals *refusals   // nil for a connection Connect did not make
	late     lateReplies // the replies of calls made WithLateReply (late.go)
}

// CallTimeoutDefault bounds a call whose context has no deadline.
const CallTimeoutDefault = 10 * time.Second

// NewClient returns a client on nc. Calls whose context carries no deadline
// time out after timeout (CallTimeoutDefault when 0).
func NewClient(nc *nats.Conn, timeout time.Duration) *Client {
	c := &Client{nc: nc, timeout: cmp.Or(timeout, CallTimeoutDefault)}
	if r, ok := watched.Load(nc); ok {
		c.refusals = r.(*refusals)
	}
	return c
}

// Conn returns the connection the client uses.
func (c *Client) Conn() *nats.Conn { return c.nc }

// Call sends req as JSON to subject, with the headers of ctx (WithHeader),
// and decodes the reply into resp (which may be nil). A reply carrying a
// micro error comes back as an *Error.
func (c *Client) Call(ctx context.Context, subject string, req, resp any) error {
	data, err := Encode(req)
	if err != nil {
		return err
	}
	return c.CallRaw(ctx, subject, data, resp)
}

// CallRaw is Call with a body that is already encoded.
func (c *Client) CallRaw(ctx context.Context, subject string, body []byte, resp any) error {
	cancel := context.CancelFunc(func() {})
	switch _, ok := ctx.Deadline(); {
	case !ok:
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	case c.refusals != nil:
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	if c.refusals != nil {
		// A refusal ends the call at once (the server sends no reply).
		defer c.refusals.unwatch(subject, c.refusals.watch(subject, cancel))
	}
	var msg *nats.Msg
	var err error
	if late := lateOf(ctx); late != nil {
		msg, err = c.requestLate(ctx, &nats.Msg{Subject: subject, Data: body, Header: OutgoingHeader(ctx)}, late)
	} else if h := OutgoingHeader(ctx); h != nil {
		msg, err = c.nc.RequestMsgWithContext(ctx, &nats.Msg{Subject: subject, Data: body, Header: h})
	} else {
		msg, err = c.nc.RequestWithContext(ctx, subject, body)
	}
	if err != nil {
		if denied := deniedPublish(c.nc, c.refusals, subject); denied != nil {
			return denied
		}
		return transportError(subject, err)
	}
	if code := msg.Header.Get(HeaderKuebusCode); code != "" {
		return &Error{Code: Code(code), Message: msg.Header.Get(HeaderError)}
	}
	if status := msg.Header.Get(HeaderErrorCode); status != "" {
		return &Error{Code: codeOfStatus(status), Message: msg.Header.Get(HeaderError)}
	}
	if resp == nil {
		return nil
	}
	// Replies are decoded leniently: a newer server may add fields.
	if err := DecodeReply(msg.Data, resp); err != nil {
		return fmt.Errorf("bus: decode reply of %s: %w", subject, err)
	}
	return nil
}
