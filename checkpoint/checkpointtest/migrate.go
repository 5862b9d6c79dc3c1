package checkpointtest

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// SQLMigration is what [Migrate] needs of a SQL saver's database: the saver's Migrate, a count
// of the rows of its migrations table, and a way to record a migration newer than the saver
// knows (as a newer binary would).
type SQLMigration struct {
	Migrate  func(context.Context) error
	Recorded func() (int, error)
	Future   func() error
	// Want is how many migrations the saver has (its SchemaVersion).
	Want int
}

// Migrate checks a SQL saver's Migrate on a database without its tables: four run at once, as
// processes starting together do, and all succeed; each migration is recorded once; and once the
// database records a newer migration, Migrate refuses with an error saying the schema is newer.
func Migrate(t *testing.T, m SQLMigration) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = m.Migrate(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent Migrate #%d: %v", i, err)
		}
	}
	if n, err := m.Recorded(); err != nil || n != m.Want {
		t.Errorf("migrations recorded: %d (%v), want %d", n, err, m.Want)
	}
	if err := m.Future(); err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Migrate on a newer schema: %v; want an error saying it is newer", err)
	}
}
