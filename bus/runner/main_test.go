package runner

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Close waits for every runner; nothing may be left.
	goleak.VerifyTestMain(m)
}
