package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines; the tests here start nothing that
// needs an ignore list.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
