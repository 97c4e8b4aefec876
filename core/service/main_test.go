package service_test

import (
	"os"
	"testing"

	"github.com/kuebus/kuebus/core/coretest"
)

func TestMain(m *testing.M) { os.Exit(coretest.Main(m)) }
