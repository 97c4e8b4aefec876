package bus_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every test stops its servers and connections; nothing may be left.
	goleak.VerifyTestMain(m)
}
