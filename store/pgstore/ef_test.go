package pgstore

import "testing"

// TestEfFor: the hnsw.ef_search a scan runs with, from Options.EfSearch and the rows wanted.
func TestEfFor(t *testing.T) {
	for _, c := range []struct{ opt, k, want int }{
		{0, 20, DefaultEfSearch},
		{0, 50, 500},
		{0, 400, 1000},
		{-1, 20, 40},
		{-1, 300, 300},
		{64, 20, 64},
		{64, 100, 100},
		{5000, 10, 1000},
	} {
		s := &Store{efSearch: c.opt}
		if got := s.efFor(c.k); got != c.want {
			t.Errorf("EfSearch %d, k %d: ef_search %d, want %d", c.opt, c.k, got, c.want)
		}
	}
}
