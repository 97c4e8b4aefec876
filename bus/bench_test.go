package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
)

// BenchmarkRPCRoundTrip is one awaited call at a time through an embedded
// server: the floor under every sequential core call.
func BenchmarkRPCRoundTrip(b *testing.B) {
	for _, inProcess := range []bool{false, true} {
		name := "server-over-tcp"
		if inProcess {
			name = "server-in-process"
		}
		b.Run(name, func(b *testing.B) {
			ns := bustest.NewServer(b)
			serverConn := ns.Conn
			if inProcess {
				serverConn = bustest.ConnectInProcess(b, ns.Server)
			}
			srv, err := bus.NewServer(serverConn, bus.ServerConfig{Name: "echo"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = srv.Stop(context.Background()) })
			if err := bus.Handle(srv, "echo", "echo", func(ctx context.Context, r *echoReq) (*echoResp, error) {
				return &echoResp{Twice: 2 * r.N}, nil
			}); err != nil {
				b.Fatal(err)
			}
			_ = srv.Ready()
			client := bus.NewClient(bustest.Connect(b, ns.ClientURL()), 5*time.Second)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var resp echoResp
				if err := client.Call(context.Background(), "echo", echoReq{N: i}, &resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	_ = nats.ErrTimeout
}
