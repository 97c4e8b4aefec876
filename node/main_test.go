package node_test

import (
	"os"
	"testing"

	"github.com/kuebus/kuebus/node/nodetest"
)

// TestMain runs the tests against a real Redis and checks for leaked
// goroutines (see nodetest.Main for its ignore list).
func TestMain(m *testing.M) { os.Exit(nodetest.Main(m)) }
