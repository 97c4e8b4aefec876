package batch_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Senders end when no call waits; nothing may be left.
	goleak.VerifyTestMain(m)
}
