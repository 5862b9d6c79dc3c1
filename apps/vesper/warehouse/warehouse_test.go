package warehouse_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
)

func TestMain(m *testing.M) { warehousetest.Main(m) }

type backend struct {
	name string
	open func(t *testing.T, cfg warehouse.Config) *warehouse.Warehouse
}

func backends() []backend {
	return []backend{
		{"sqlite", func(t *testing.T, cfg warehouse.Config) *warehouse.Warehouse {
			if cfg == (warehouse.Config{}) {
				return warehousetest.SQLite(t)
			}
			cfg.DSN = filepath.Join(t.TempDir(), "w.db")
			if cfg.Data == nil {
				cfg.Data = warehousetest.Data()
			}
			w, err := warehouse.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return w
		}},
		{"postgres", func(t *testing.T, cfg warehouse.Config) *warehouse.Warehouse {
			return warehousetest.Postgres(t, cfg)
		}},
	}
}

func count(t *testing.T, w *warehouse.Warehouse, tenant, q string, args ...any) int64 {
	t.Helper()
	res, err := w.Query(context.Background(), tenant, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res.Rows[0][0].(int64)
}

func TestWarehouse(t *testing.T) {
	d := warehousetest.Data()
	var hours int
	for _, c := range d.Curves {
		hours += len(c.Prices)
	}
	tenantEvents := map[string]int64{}
	for _, e := range d.Events {
		tenantEvents[e.Tenant]++
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := b.open(t, warehouse.Config{})
			ctx := context.Background()
			if got := count(t, w, "vesper", "SELECT COUNT(*) FROM mc_dayahead"); got != int64(hours) {
				t.Errorf("mc_dayahead rows = %d, want %d", got, hours)
			}
			// hourly resolution: one row per hour of 2025 for a curve that covers the year
			if got := count(t, w, "vesper", `SELECT COUNT(*) FROM mc_dayahead da JOIN mc_vendor_files vf
				ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key
				WHERE vf.vendor = $1 AND vf.hubzone = $2 AND vf.asof = $3 AND da.year = $4`, "Ascend", "NP15", "Jan_2025", 2025); got != 8760 {
				t.Errorf("hours in 2025 = %d, want 8760", got)
			}
			t.Run("tenant isolation", func(t *testing.T) {
				for tenant, want := range tenantEvents {
					if got := count(t, w, tenant, "SELECT COUNT(*) FROM pbi_activity_events"); got != want {
						t.Errorf("%s sees %d events, want %d", tenant, got, want)
					}
					if got := count(t, w, tenant, "SELECT COUNT(*) FROM pbi_activity_events WHERE tenant_id <> $1", tenant); got != 0 {
						t.Errorf("%s sees %d events of another tenant", tenant, got)
					}
				}
				if got := count(t, w, "nobody", "SELECT COUNT(*) FROM per_project"); got != 0 {
					t.Errorf("unknown tenant sees %d projects", got)
				}
				// a query that names the view twice, in a subquery and a CTE of its own
				if got := count(t, w, "northwind", `WITH x AS (SELECT name FROM per_project) SELECT COUNT(*) FROM x
					WHERE name IN (SELECT name FROM per_project WHERE name LIKE $1)`, "%Nazareth%"); got != 1 {
					t.Errorf("northwind sees %d Nazareth projects, want 1", got)
				}
			})
			t.Run("row cap", func(t *testing.T) {
				res, err := w.Query(ctx, "vesper", "SELECT date, hour, dayahead_price FROM mc_dayahead WHERE year = $1", 2025)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Rows) != 500 || !res.Truncated || !strings.Contains(res.Note(), "500") {
					t.Errorf("rows=%d truncated=%v note=%q", len(res.Rows), res.Truncated, res.Note())
				}
				res, err = w.Query(ctx, "vesper", "SELECT name FROM per_project")
				if err != nil {
					t.Fatal(err)
				}
				if res.Truncated || res.Note() != "" || len(res.Rows) != 30 {
					t.Errorf("30 projects: rows=%d truncated=%v", len(res.Rows), res.Truncated)
				}
			})
			t.Run("read only", func(t *testing.T) {
				for _, q := range []string{
					"INSERT INTO base_per_project (name, tenant_id) VALUES ('x', 'vesper')",
					"DELETE FROM base_per_project",
					"UPDATE base_per_project SET name = 'x'",
				} {
					if _, err := w.Query(ctx, "vesper", q); err == nil {
						t.Errorf("%s: want an error", q)
					}
				}
				if got := count(t, w, "vesper", "SELECT COUNT(*) FROM per_project"); got != 30 {
					t.Errorf("projects after write attempts = %d", got)
				}
			})
			t.Run("no tenant", func(t *testing.T) {
				if _, err := w.Query(ctx, " ", "SELECT 1"); !errors.Is(err, warehouse.ErrNoTenant) {
					t.Errorf("err = %v, want ErrNoTenant", err)
				}
			})
			t.Run("bad sql", func(t *testing.T) {
				_, err := w.Query(ctx, "vesper", "SELEC nonsense")
				var qe *warehouse.QueryError
				if !errors.As(err, &qe) {
					t.Errorf("err = %v, want *QueryError", err)
				}
			})
		})
	}
}

func TestPostgresReaderRole(t *testing.T) {
	w := warehousetest.Postgres(t, warehouse.Config{})
	ctx := context.Background()
	// the reader may not read base tables, even with the tenant set
	if _, err := w.Query(ctx, "vesper", "SELECT COUNT(*) FROM base_per_project"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("reading a base table: err = %v, want permission denied", err)
	}
	// nor change the tenant setting for itself in a way that sticks past RLS
	if _, err := w.Query(ctx, "vesper", "SELECT pg_read_file('/etc/passwd')"); err == nil {
		t.Error("pg_read_file as reader: want an error")
	}
}

func TestPostgresTimeout(t *testing.T) {
	w := warehousetest.Postgres(t, warehouse.Config{Timeout: 200 * time.Millisecond, NoLoad: true})
	_, err := w.Query(context.Background(), "vesper", "SELECT pg_sleep(5)")
	if !errors.Is(err, warehouse.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestSQLiteTimeout(t *testing.T) {
	w := backends()[0].open(t, warehouse.Config{Timeout: 100 * time.Millisecond, NoLoad: true})
	_, err := w.Query(context.Background(), "vesper",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n")
	if !errors.Is(err, warehouse.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []warehouse.Config{
		{DSN: ":memory:"},
		{Dialect: "mysql"},
		{Dialect: warehouse.Postgres},
		{Dialect: warehouse.Postgres, DSN: "postgres://x", Schema: "Bad-Name"},
		{MaxRows: -1, DSN: "x.db"},
	} {
		_, err := warehouse.Open(context.Background(), cfg)
		if !errors.Is(err, warehouse.ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", cfg, err)
		}
	}
}

func TestCSV(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("per_project.csv", "gid,project_id,tenant_id,name,currentprojectstage,spa,sponsor,technology,gencap,storecap,market,location,utility,Status_Type,summary,Actuals_LTD,Total_Operating_Budget,total_operating_forecast,ic_lc,ppa_lc,buyer,tenor,products,price,revision_date,is_archived\n"+
		"g1,P1,acme,Alpha Solar,Stage 2 Mid Dev,West,Ann,Solar,100,,CAISO,Kern,PG&E,on_track,ok,\"1,000\",5000,5000,0,0,,,,,1/31/2026,0\n")
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := b.open(t, warehouse.Config{CSVDir: dir})
			res, err := w.Query(context.Background(), "acme", "SELECT name, actuals_ltd, storecap, revision_date FROM per_project")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 1 || res.Rows[0][0] != "Alpha Solar" || res.Rows[0][1] != 1000.0 || res.Rows[0][2] != nil {
				t.Fatalf("rows = %v", res.Rows)
			}
			if got := count(t, w, "acme", "SELECT COUNT(*) FROM mc_dayahead"); got != 0 {
				t.Errorf("views without a file should stay empty, got %d rows", got)
			}
		})
	}
	t.Run("bad files", func(t *testing.T) {
		v, _ := warehouse.ViewByName("changes")
		for _, tc := range []struct{ body, want string }{
			{"change_id,tenant_id,dateofchange,projectname,taskname,fieldchanged,previousvalue\n", "lacks column(s) newvalue"},
			{"change_id,tenant_id,dateofchange,projectname,taskname,fieldchanged,previousvalue,newvalue,extra\n", "unknown column"},
			{"change_id,tenant_id,dateofchange,projectname,taskname,fieldchanged,previousvalue,newvalue\nx,a,2026-01-01,p,t,f,a,b\n", `:2 column change_id: "x" is not a whole number`},
			{"change_id,tenant_id,dateofchange,projectname,taskname,fieldchanged,previousvalue,newvalue\n1,a,yesterday,p,t,f,a,b\n", "is not a date"},
		} {
			var err error
			for _, e := range warehouse.ParseCSV(v, strings.NewReader(tc.body)) {
				if e != nil {
					err = e
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		}
		empty := t.TempDir()
		_, err := warehouse.Open(context.Background(), warehouse.Config{DSN: filepath.Join(empty, "w.db"), CSVDir: empty})
		var le *warehouse.LoadError
		if !errors.As(err, &le) {
			t.Errorf("empty dir: err = %v, want *LoadError", err)
		}
	})
}

func TestGenerateDeterministic(t *testing.T) {
	a, b := warehouse.Generate(), warehouse.Generate()
	if len(a.Events) != len(b.Events) || a.Events[len(a.Events)-1] != b.Events[len(b.Events)-1] {
		t.Fatal("events differ between runs")
	}
	for i := range a.Curves {
		if a.Curves[i].Prices[1234] != b.Curves[i].Prices[1234] {
			t.Fatal("prices differ between runs")
		}
	}
	if n := len(a.Projects); n != 33 {
		t.Errorf("projects = %d", n)
	}
}

func BenchmarkGenerateAndLoadSQLite(b *testing.B) {
	for b.Loop() {
		dir := b.TempDir()
		w, err := warehouse.Open(context.Background(), warehouse.Config{DSN: filepath.Join(dir, "w.db")})
		if err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
}

func BenchmarkGenerateAndLoadPostgres(b *testing.B) {
	warehousetest.PostgresDB(b)
	for b.Loop() {
		warehousetest.Postgres(b, warehouse.Config{Data: warehouse.Generate()})
	}
}

func BenchmarkQueryAnnualAverage(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			var w *warehouse.Warehouse
			if name == "sqlite" {
				w = warehousetest.SQLite(b)
			} else {
				w = warehousetest.Postgres(b, warehouse.Config{})
			}
			ctx := context.Background()
			for b.Loop() {
				if _, err := w.Query(ctx, "vesper", `SELECT vf.asof, AVG(da.dayahead_price), COUNT(*) FROM mc_dayahead da JOIN mc_vendor_files vf
					ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key
					WHERE vf.vendor = $1 AND vf.hubzone = $2 AND da.year = $3 GROUP BY vf.asof`, "Ascend", "NP15", 2025); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
