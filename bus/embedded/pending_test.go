package embedded_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/embedded"
)

// TestASubscriberThatNeverReadsIsCutOff: the server cuts off a client that
// stops reading once MaxPendingDefault bytes wait for it, instead of
// buffering them in this process (NATS's own limit, 64 MiB, would hold
// the 40 MiB sent here and keep the client).
func TestASubscriberThatNeverReadsIsCutOff(t *testing.T) {
	t.Parallel()
	e, err := embedded.Start(embedded.Config{})
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)

	// A raw client: subscribes, reads its PONG, then never reads again.
	c, err := net.Dial("tcp", strings.TrimPrefix(e.ClientURL(), "nats://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	r := bufio.NewReader(c)
	_, err = fmt.Fprint(c, "CONNECT {\"verbose\":false}\r\nSUB flood 1\r\nPING\r\n")
	require.NoError(t, err)
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if line == "PONG\r\n" {
			break
		}
	}

	pub, err := nats.Connect(e.ClientURL())
	require.NoError(t, err)
	t.Cleanup(pub.Close)
	body := make([]byte, 512<<10)
	for range 80 { // 40 MiB, more than the limit and the sockets' buffers
		require.NoError(t, pub.Publish("flood", body))
	}
	// Once the server has answered this flush, it has queued every
	// message for the subscriber, or cut it off.
	require.NoError(t, pub.Flush())

	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.Copy(io.Discard, r)
	require.NoError(t, err, "the server closed the connection (EOF): it was cut off, not served its 40 MiB")
}
