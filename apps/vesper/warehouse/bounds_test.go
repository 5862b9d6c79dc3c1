package warehouse_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

// A result is bounded in bytes and in the length of each value, not only in
// rows, and says what it cut.
func TestResultBounds(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := b.open(t, warehouse.Config{MaxResultBytes: 4000, MaxValueBytes: 100, MaxValueBuild: 50_000, NoLoad: true})
			ctx := context.Background()
			// every row is 1,000 bytes: four fit in 4,000 bytes
			res, err := w.Query(ctx, "vesper", "SELECT x FROM (SELECT 1 AS i UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) n, (SELECT $1 AS x) v", strings.Repeat("ab", 500))
			if err != nil {
				t.Fatal(err)
			}
			if res.CutValues != len(res.Rows) || len(res.Rows) == 0 {
				t.Errorf("cut values %d of %d rows, want all cut", res.CutValues, len(res.Rows))
			}
			for _, r := range res.Rows {
				if s := r[0].(string); len(s) > 100+len("…") || !strings.HasSuffix(s, "…") {
					t.Fatalf("value of %d bytes %q, want at most 100 and a final …", len(s), s[:20])
				}
			}
			if !strings.Contains(res.Note(), "too long") {
				t.Errorf("note %q does not say values were cut", res.Note())
			}
			// with long values kept, the byte cap stops the rows
			w2 := b.open(t, warehouse.Config{MaxResultBytes: 4000, MaxValueBytes: 2000, NoLoad: true})
			res, err = w2.Query(ctx, "vesper", "SELECT x FROM (SELECT 1 AS i UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) n, (SELECT $1 AS x) v", strings.Repeat("ab", 500))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Truncated || !res.CutBytes || len(res.Rows) != 4 {
				t.Errorf("rows %d truncated %v cutBytes %v, want 4 rows cut by bytes", len(res.Rows), res.Truncated, res.CutBytes)
			}
			if !strings.Contains(res.Note(), "too large") {
				t.Errorf("note %q does not say the result was too large", res.Note())
			}
		})
	}
}

// On SQLite a query cannot build a value past MaxValueBuild: the statement
// fails with a QueryError that says what to do, and the next query on the
// pool works.
func TestSQLiteValueBuildLimit(t *testing.T) {
	w := backends()[0].open(t, warehouse.Config{MaxValueBuild: 10_000, NoLoad: true})
	ctx := context.Background()
	_, err := w.Query(ctx, "vesper", "SELECT replace(replace(replace($1, 'a', $1), 'a', $1), 'a', $1)", strings.Repeat("a", 30))
	var qe *warehouse.QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Hint, "larger than 10000 bytes") {
		t.Fatalf("err = %v, want a QueryError naming the 10000-byte bound", err)
	}
	res, err := w.Query(ctx, "vesper", "SELECT length($1)", strings.Repeat("a", 9000))
	if err != nil || res.Rows[0][0].(int64) != 9000 {
		t.Fatalf("a value under the bound: %v %v", res, err)
	}
}

// On Postgres every query runs with the configured work_mem.
func TestPostgresWorkMem(t *testing.T) {
	w := backends()[1].open(t, warehouse.Config{WorkMemBytes: 2 << 20, NoLoad: true})
	res, err := w.Query(context.Background(), "vesper", "SELECT current_setting('work_mem')")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0][0]; got != "2MB" {
		t.Errorf("work_mem %v, want 2MB", got)
	}
}
