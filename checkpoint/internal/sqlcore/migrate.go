package sqlcore

import "fmt"

// Migration is one step of a saver's schema.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Latest is the version the migrations bring a database to.
func Latest(ms []Migration) int { return ms[len(ms)-1].Version }

// Apply runs, in a transaction the caller holds, the migrations after current: exec runs one
// migration's SQL, record notes that it was applied. A database newer than ms is an error.
func Apply(ms []Migration, current int, exec func(sql string) error, record func(Migration) error) error {
	if current > Latest(ms) {
		return TooNew(current, Latest(ms))
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		if err := exec(m.SQL); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if err := record(m); err != nil {
			return err
		}
	}
	return nil
}

// TooNew is the error for a database whose schema is newer than this build knows: an older
// binary must not write to it.
func TooNew(current, known int) error {
	return fmt.Errorf("the database's checkpoint schema is at version %d, newer than the %d this build knows; run a newer trellis", current, known)
}
