package memstore_test

import (
	"testing"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
	"github.com/trellis-go/trellis/store/storetest"
)

func TestConformance(t *testing.T) {
	for _, exact := range []bool{false, true} {
		name := "hnsw"
		if exact {
			name = "exact"
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg store.Config) store.Store {
				s, err := memstore.New(&memstore.Options{Config: cfg, ExactVectors: exact})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
}
