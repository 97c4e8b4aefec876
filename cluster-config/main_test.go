package clusterconfig_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (the script test's
// NATS client included).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
