package worker_test

import (
	"os"
	"testing"

	"github.com/kuebus/kuebus/node/nodetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childWorker()) // the worker process of the SIGKILL test
	}
	os.Exit(nodetest.Main(m))
}
