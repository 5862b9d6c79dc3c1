package warehouse_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
)

// checkRollup compares the rollup with aggregates over the hourly rows for
// every file, hub-zone and year of one market, and the hour-of-day minima
// and maxima of one file.
func checkRollup(t *testing.T, w *warehouse.Warehouse) {
	t.Helper()
	ctx := context.Background()
	direct, err := w.Query(ctx, "vesper", `SELECT file_info_key, hubzone_key, year, AVG(dayahead_price), COUNT(*)
		FROM mc_dayahead WHERE hubzone_key IN (SELECT hubzone_key FROM mc_vendor_files WHERE market = 'CAISO')
		GROUP BY file_info_key, hubzone_key, year ORDER BY file_info_key, hubzone_key, year`)
	if err != nil {
		t.Fatal(err)
	}
	rolled, err := w.Query(ctx, "vesper", `SELECT file_info_key, hubzone_key, year, SUM(price_sum) / SUM(priced), SUM(hours)
		FROM mc_dayahead_hourly WHERE hubzone_key IN (SELECT hubzone_key FROM mc_vendor_files WHERE market = 'CAISO')
		GROUP BY file_info_key, hubzone_key, year ORDER BY file_info_key, hubzone_key, year`)
	if err != nil {
		t.Fatal(err)
	}
	if len(direct.Rows) == 0 || len(direct.Rows) != len(rolled.Rows) {
		t.Fatalf("groups: %d over the hourly rows, %d in the rollup", len(direct.Rows), len(rolled.Rows))
	}
	for i, d := range direct.Rows {
		r := rolled.Rows[i]
		if d[0] != r[0] || d[1] != r[1] || asInt(d[2]) != asInt(r[2]) || asInt(d[4]) != asInt(r[4]) ||
			math.Abs(asFloat(d[3])-asFloat(r[3])) > 1e-9 {
			t.Errorf("group %d: hourly rows say %v, the rollup %v", i, d, r)
		}
	}
	byHour := `SELECT hour, MIN(p1), MAX(p2) FROM (%s) x GROUP BY hour ORDER BY hour`
	hd, err := w.Query(ctx, "vesper", strings.Replace(byHour, "%s", `SELECT hour, dayahead_price p1, dayahead_price p2 FROM mc_dayahead
		WHERE year = 2025 AND file_info_key = (SELECT MIN(file_info_key) FROM mc_vendor_files)`, 1))
	if err != nil {
		t.Fatal(err)
	}
	hr, err := w.Query(ctx, "vesper", strings.Replace(byHour, "%s", `SELECT hour, price_min p1, price_max p2 FROM mc_dayahead_hourly
		WHERE year = 2025 AND file_info_key = (SELECT MIN(file_info_key) FROM mc_vendor_files)`, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(hd.Rows) != 24 || len(hr.Rows) != 24 {
		t.Fatalf("hours: %d and %d, want 24", len(hd.Rows), len(hr.Rows))
	}
	for i := range hd.Rows {
		if asFloat(hd.Rows[i][1]) != asFloat(hr.Rows[i][1]) || asFloat(hd.Rows[i][2]) != asFloat(hr.Rows[i][2]) {
			t.Errorf("hour %d: min/max %v over the hourly rows, %v in the rollup", i, hd.Rows[i], hr.Rows[i])
		}
	}
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return math.NaN()
}

// asInt reads a count; Postgres gives SUM of integers as numeric.
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func TestPriceRollup(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			checkRollup(t, b.open(t, warehouse.Config{}))
		})
	}
}

// A warehouse loaded before the rollup existed (no marker, no rows) gets it
// when it is opened.
func TestRollupBuiltOnOpen(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "w.db")
	w, err := warehouse.Open(ctx, warehouse.Config{DSN: dsn, Data: warehousetest.Data(), Timeout: warehousetest.TestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"DELETE FROM base_mc_dayahead_hourly", "DELETE FROM vesper_meta WHERE key = 'price_rollup'"} {
		if _, err := w.DB().ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	w, err = warehouse.Open(ctx, warehouse.Config{DSN: dsn, Timeout: warehousetest.TestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	checkRollup(t, w)
}

// The price index covers what queries over mc_dayahead read: SQLite answers
// from the index alone, Postgres scans the index (index-only once the
// pages are all-visible), never the table.
func TestPriceIndexPlans(t *testing.T) {
	const annual = `SELECT vf.asof, AVG(da.dayahead_price), COUNT(*)
		FROM mc_dayahead da JOIN mc_vendor_files vf ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key
		WHERE vf.vendor = 'Ascend' AND vf.market = 'CAISO' AND vf.hubzone = 'NP15' AND da.year = 2025
		GROUP BY vf.asof`
	t.Run("sqlite", func(t *testing.T) {
		w := warehousetest.SQLite(t)
		rows, err := w.DB().Query("EXPLAIN QUERY PLAN " + annual)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "COVERING INDEX "+warehouse.PriceIndex) {
			t.Errorf("the plan does not use the covering index %s:\n%s", warehouse.PriceIndex, p)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		w := warehousetest.Postgres(t, warehouse.Config{})
		res, err := w.Query(context.Background(), "vesper", "EXPLAIN "+annual)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for _, r := range res.Rows {
			plan = append(plan, r[0].(string))
		}
		p := strings.Join(plan, "\n")
		// An index-only scan needs the pages marked all-visible by the VACUUM
		// after loading, which a transaction older than the load (another
		// session's, on a shared server) prevents; then the planner reads the
		// same index with heap fetches, or as a bitmap when the machine is
		// busy and its estimates say so. Either way the index is used.
		if !strings.Contains(p, "Index Only Scan using "+warehouse.PriceIndex) && !strings.Contains(p, "Index Scan using "+warehouse.PriceIndex) &&
			!strings.Contains(p, "Bitmap Index Scan on "+warehouse.PriceIndex) {
			t.Errorf("the plan does not use the index %s:\n%s", warehouse.PriceIndex, p)
		} else if !strings.Contains(p, "Index Only Scan") {
			t.Logf("an index scan with heap fetches (pages not all-visible yet):\n%s", p)
		}
		if strings.Contains(p, "Seq Scan on base_mc_dayahead ") {
			t.Errorf("the plan scans the hourly table:\n%s", p)
		}
	})
}
