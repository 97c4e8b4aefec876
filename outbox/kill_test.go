package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestARelayKilledSixTimesMakesEachJobOnce is the scenario: 2,000
// rows commit in 40 transactions while `kuebus-outbox relay` is killed -9
// six times, each time while it is moving rows; a last relay then empties
// the table. Exactly 2,000 jobs exist (no worker runs, so every job still
// holds its unique key and a second create of a row would show as a
// second job only if the key failed).
func TestARelayKilledSixTimesMakesEachJobOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and kills a relay binary")
	}
	forEachDB(t, func(t *testing.T, d *testDB) {
		c := nodetest.NewCore(t, service.Config{})
		ob := d.outbox(t)
		ctx := context.Background()
		const txs, per, kills = 40, 50, 6
		count := func() int64 {
			n, err := c.Client.Count(ctx, "", "killed")
			require.NoError(t, err)
			return n
		}
		commit := func(from, to int) {
			for i := from; i < to; i++ {
				specs := make([]core.Spec, per)
				for k := range specs {
					specs[k] = spec("killed", i*per+k)
				}
				enqueue(t, d.db, ob, true, specs...)
			}
		}
		step := txs / (kills + 1)
		for k := range kills {
			before := count()
			relay := startRelay(t, d, c.NATS.ClientURL())
			commit(k*step, (k+1)*step)
			// Kill it once it is moving this round's rows: jobs have
			// appeared, and (most times) rows still wait, mid-batch.
			require.Eventually(t, func() bool { return count() > before }, 60*time.Second, time.Millisecond)
			require.NoError(t, relay.Process.Kill())
			_ = relay.Wait()
		}
		commit(kills*step, txs)
		relay := startRelay(t, d, c.NATS.ClientURL())
		require.Eventually(t, func() bool {
			st, err := ob.Stats(ctx)
			return err == nil && st.Waiting == 0
		}, 120*time.Second, 10*time.Millisecond)
		stopRelay(t, relay)
		require.Equal(t, int64(txs*per), count(), "one job per row")
		require.Zero(t, d.rows(t, "kuebus_outbox"))
		require.Zero(t, d.rows(t, "kuebus_outbox_dead"))
	})
}
