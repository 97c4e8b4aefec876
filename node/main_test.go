package node_test

import (
	"os"
	"testing"

	"github.com/kuebus/kuebus/core/coretest"
)

// TestMain runs the tests against a real Redis and checks for leaked
// goroutines (see coretest.Main for its ignore list).
func TestMain(m *testing.M) { os.Exit(coretest.Main(m)) }
