package checkpoint_test

import (
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
)

func TestMemorySaverConformance(t *testing.T) {
	checkpointtest.Run(t, func(*testing.T) checkpoint.Saver { return checkpoint.NewMemorySaver() })
}

func TestMemorySaverSharedConformance(t *testing.T) {
	// One saver for every subtest: the suite must keep its threads apart.
	s := checkpoint.NewMemorySaver()
	checkpointtest.Run(t, func(*testing.T) checkpoint.Saver { return s })
}
