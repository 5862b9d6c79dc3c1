package memstore_test

import (
	"testing"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
	"github.com/trellis-go/trellis/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunModes(t, []string{"hnsw", "exact"}, func(t *testing.T, cfg store.Config, mode string) (store.Store, error) {
		return memstore.New(&memstore.Options{Config: cfg, ExactVectors: mode == "exact"})
	})
}
