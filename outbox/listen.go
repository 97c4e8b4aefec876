package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// errNoListen: the *sql.DB's driver is not pgx's, so the relay cannot
// LISTEN and polls instead.
var errNoListen = errors.New("outbox: the PostgreSQL driver is not pgx's stdlib driver: polling instead of LISTEN")

// listen holds one connection of the pool LISTENing on the outbox's
// channel and wakes the relay on each notification, and once after each
// LISTEN (rows committed while it was not listening). It tells listening
// whether it could LISTEN at all, then keeps at it (reconnecting after a
// pause) until ctx ends.
func (r *Relay) listen(ctx context.Context, wake chan<- struct{}, listening chan<- bool) {
	told := false
	tell := func(ok bool) {
		if !told {
			told = true
			listening <- ok
		}
	}
	defer tell(false)
	for ctx.Err() == nil {
		err := r.listenOnce(ctx, wake, func() { tell(true) })
		if errors.Is(err, errNoListen) {
			r.opts.Logger.WarnContext(ctx, errNoListen.Error())
			return
		}
		if ctx.Err() != nil {
			return
		}
		r.opts.Logger.WarnContext(ctx, "outbox relay: LISTEN lost; listening again", "error", err)
		tell(false) // the first try failed: poll at PollInterval
		signal(wake)
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// listenOnce LISTENs on one connection until it fails or ctx ends.
func (r *Relay) listenOnce(ctx context.Context, wake chan<- struct{}, listening func()) error {
	conn, err := r.ob.db.Conn(ctx)
	if err != nil {
		return err
	}
	// A connection interrupted in WaitForNotification is closed by pgx,
	// and database/sql drops a closed one instead of pooling it.
	defer func() { _ = conn.Close() }()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNoListen
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
			return err
		}
		listening()
		signal(wake)
		for {
			if _, err := pc.WaitForNotification(ctx); err != nil {
				return err
			}
			signal(wake)
		}
	})
}

// signal wakes the relay without blocking: one pending wake is enough.
func signal(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}
