package coreotel_test

import (
	"os"
	"testing"

	"github.com/kuebus/kuebus/node/nodetest"
)

func TestMain(m *testing.M) { os.Exit(nodetest.Main(m)) }
