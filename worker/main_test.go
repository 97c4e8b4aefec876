package worker_test

import (
	"os"
	"testing"

	"github.com/kuebus/kuebus/core/coretest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childWorker()) // the worker process of the SIGKILL test
	}
	os.Exit(coretest.Main(m))
}
