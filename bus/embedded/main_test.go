package embedded_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every test shuts its servers down and closes its connections;
	// nothing may be left.
	goleak.VerifyTestMain(m)
}
