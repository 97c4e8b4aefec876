package httprule_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Pure functions: nothing may be left.
	goleak.VerifyTestMain(m)
}
