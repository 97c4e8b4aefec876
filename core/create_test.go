package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestConcurrentCreatesShareOneMessage: while one create is on its way,
// the creates of other goroutines wait, then go to core as one
// create_bulk. Each gets its own job with its own data; a bad spec among
// them gets its own invalid error, and the others are stored all the same.
func TestConcurrentCreatesShareOneMessage(t *testing.T) {
	c := nodetest.NewCore(t, service.Config{})
	ctx := context.Background()
	bulks := make(chan *nats.Msg, 16)
	sub, err := c.NATS.Conn.ChanSubscribe(c.Client.Subjects().Core("create_bulk"), bulks)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, c.NATS.Conn.Flush())

	held, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	core.HoldCreates(c.Client, func() {
		once.Do(func() { held <- struct{}{}; <-release })
	})

	first := make(chan error, 1)
	go func() {
		_, err := c.Client.Create(ctx, "mail", "first", nil)
		first <- err
	}()
	<-held // the first create is on its way, alone

	const calls = 20
	jobs, errs := make([]*core.Job, calls), make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		jobType := "mail"
		if i == 7 {
			jobType = "not a type" // refused by core: invalid
		}
		wg.Go(func() { jobs[i], errs[i] = c.Client.Create(ctx, jobType, fmt.Sprintf("job %d", i), nil) })
	}
	require.Eventually(t, func() bool { return core.CreatesWaiting(c.Client) == calls }, 10*time.Second, time.Millisecond)
	close(release)
	require.NoError(t, <-first)
	wg.Wait()

	for i := range calls {
		if i == 7 {
			require.ErrorIs(t, errs[i], core.ErrInvalid)
			require.ErrorContains(t, errs[i], "type")
			continue
		}
		require.NoError(t, errs[i], "create %d", i)
		want, _ := json.Marshal(fmt.Sprintf("job %d", i))
		require.JSONEq(t, string(want), string(jobs[i].Data), "create %d got its own job", i)
		got, err := c.Client.Get(ctx, jobs[i].ID)
		require.NoError(t, err)
		require.Equal(t, jobs[i].Data, got.Data, "what create %d returned is what was stored", i)
	}
	n, err := c.Client.Count(ctx, "", "mail")
	require.NoError(t, err)
	require.Equal(t, int64(1+calls-1), n, "every good create stored once, the bad one not at all")
	select {
	case <-bulks: // the waiting creates went as a create_bulk (refused, then one by one)
	case <-time.After(10 * time.Second):
		t.Fatal("no create_bulk was sent")
	}
}
