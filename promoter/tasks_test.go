package promoter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/promoter"
)

func TestALeaderRunsItsTasksForTheTermAndAwaitsThem(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: binds loopback sockets")
	}
	t.Parallel()
	ns := bustest.NewServer(t)
	started, ended := make(chan struct{}), make(chan struct{})
	n, err := promoter.New(promoter.NodeConfig{Name: "a", Bind: "127.0.0.1:0", Memberlist: memberlist.DefaultLocalConfig(), Conn: ns.Conn,
		Tasks: []func(context.Context) error{func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			close(ended)
			return nil
		}}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	waitFor(t, started, "the leader's task to start")
	cancel()
	require.NoError(t, waitFor(t, done, "Run to return"))
	select {
	case <-ended:
	default:
		t.Fatal("Run returned before its task did")
	}
	waitMemberlistGone(t, n)
}

func TestATaskThatFailsEndsTheTermAsALoopWould(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: binds loopback sockets")
	}
	t.Parallel()
	ns := bustest.NewServer(t)
	n, err := promoter.New(promoter.NodeConfig{Name: "a", Bind: "127.0.0.1:0", Memberlist: memberlist.DefaultLocalConfig(), Conn: ns.Conn,
		Tasks: []func(context.Context) error{func(context.Context) error { return errors.New("the task broke") }}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- n.Run(context.Background()) }()
	require.ErrorContains(t, waitFor(t, done, "Run to return"), "the task broke")
	waitMemberlistGone(t, n)
}
