package warehouse

import (
	"fmt"
	"strings"
)

// ColumnType is the portable type of a warehouse column. Each dialect maps it
// to its own storage type; values cross the boundary as the Go types listed.
type ColumnType int

const (
	Text ColumnType = iota // string
	Int                    // int64
	Real                   // float64
	Date                   // time.Time at midnight UTC; stored as DATE (Postgres) or 'YYYY-MM-DD' text (SQLite)
)

// Column is one column of a view.
type Column struct {
	Name string // as it appears in SQL; names with spaces or capitals are always double-quoted
	Type ColumnType
}

// View describes one of the approved views: the names the document uses,
// the columns its SQL reads, and whether rows belong to a tenant.
type View struct {
	Name    string
	Columns []Column
	// Tenant is true when the view has a tenant_id column and every query
	// sees only the rows of the tenant it runs for.
	Tenant bool
	// Domain says which agent's data this is ("dayahead", "pbi", "per").
	Domain string
}

// BaseTable is the name of the table that holds the view's rows. Queries
// never name it: the reader role may read the views only.
func (v View) BaseTable() string { return "base_" + v.Name }

// Column returns the column with the given name (case-insensitive).
func (v View) Column(name string) (Column, bool) {
	for _, c := range v.Columns {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return Column{}, false
}

// QuoteIdent quotes an identifier for both dialects.
func QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func cols(spec string) []Column {
	var out []Column
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, typ, ok := strings.Cut(f, ":")
		if !ok {
			panic("warehouse: bad column spec " + f)
		}
		var t ColumnType
		switch typ {
		case "text":
			t = Text
		case "int":
			t = Int
		case "real":
			t = Real
		case "date":
			t = Date
		default:
			panic("warehouse: bad column type " + typ)
		}
		out = append(out, Column{Name: name, Type: t})
	}
	return out
}

// Views are the nine approved views, in load order.
var Views = []View{
	{Name: "mc_vendor_files", Domain: "dayahead", Columns: cols(`composite_key:text, file_info_key:text, hubzone_key:text,
		vendor:text, market:text, hubzone:text, asof:text, yr:int, reference:text, selection:int`)},
	{Name: "mc_dayahead", Domain: "dayahead", Columns: cols(`file_info_key:text, hubzone_key:text, composite_key:text,
		date:date, year:int, month:int, hour:int, dayahead_price:real`)},
	{Name: "pbi_activity_events", Domain: "pbi", Tenant: true, Columns: cols(`event_id:int, tenant_id:text, report_id:text,
		report_name:text, workspace_name:text, user_email:text, activity_type:text, activity_date:date`)},
	{Name: "per_project", Domain: "per", Tenant: true, Columns: cols(`gid:text, project_id:text, tenant_id:text, name:text,
		currentprojectstage:text, spa:text, sponsor:text, technology:text, gencap:real, storecap:real, market:text,
		location:text, utility:text, status_type:text, summary:text, actuals_ltd:real, total_operating_budget:real,
		total_operating_forecast:real, ic_lc:real, ppa_lc:real, buyer:text, tenor:int, products:text, price:real,
		revision_date:date, is_archived:int`)},
	{Name: "per_projecthealth", Domain: "per", Tenant: true, Columns: cols(`project_gid:text, tenant_id:text, section:text,
		name:text, healthcolor:text, notes:text, due_on:date, pctcomplete:real, sort:int`)},
	{Name: "per_tasks", Domain: "per", Tenant: true, Columns: cols(`project_gid:text, tenant_id:text, projectname:text,
		taskname:text, task_type:text, finishdate:date, status:text, risk:text, notesforper:text`)},
	{Name: "per_project45", Domain: "per", Tenant: true, Columns: cols(`project_id:text, tenant_id:text, group:text,
		subgrouping:text, metric:text, value_numbers:real, value_dates:date, monthfromfilename:text`)},
	{Name: "activeportfolio_mm", Domain: "per", Tenant: true, Columns: cols(`project_id:text, tenant_id:text,
		Project Name:text, Current Project Stage:text, Project Status Color:text, CommercializationStatus:text,
		Stage 1 Early Dev:date, Stage 2 Mid Dev:date, Stage 3 Late Dev:date, Stage 4 Pre-Con & Finance:date,
		Stage 5 Construction:date, Stage 6 Operation:date, Stage 7 Sale:date, Stage 8 Closing:date,
		Minimum Site Control:date, Substantial Completion:date, Mechanical Completion:date, Project Finance:date,
		EPC FNTP:date, Execute Power Purchase Agreement:date, Execute Interconnection Agreement:date,
		Commercial Operation:date, Decisioning Date:date, COD Year:int, monthlysnapshot:int, asofday:date`)},
	{Name: "changes", Domain: "per", Tenant: true, Columns: cols(`change_id:int, tenant_id:text, dateofchange:date,
		projectname:text, taskname:text, fieldchanged:text, previousvalue:text, newvalue:text`)},
}

// ViewByName returns the approved view with that name (case-insensitive).
func ViewByName(name string) (View, bool) {
	for _, v := range Views {
		if strings.EqualFold(v.Name, name) {
			return v, true
		}
	}
	return View{}, false
}

// ViewNames lists the approved view names.
func ViewNames() []string {
	out := make([]string, len(Views))
	for i, v := range Views {
		out[i] = v.Name
	}
	return out
}

// Dialect is the SQL flavour of a warehouse connection.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

func (d Dialect) columnType(t ColumnType) string {
	switch t {
	case Int:
		if d == Postgres {
			return "BIGINT"
		}
		return "INTEGER"
	case Real:
		if d == Postgres {
			return "DOUBLE PRECISION"
		}
		return "REAL"
	case Date:
		if d == Postgres {
			return "DATE"
		}
		return "TEXT"
	default:
		return "TEXT"
	}
}

func columnList(v View) string {
	names := make([]string, len(v.Columns))
	for i, c := range v.Columns {
		names[i] = QuoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}

// createTable returns the DDL of a view's base table.
func (d Dialect) createTable(v View) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (", v.BaseTable())
	for i, c := range v.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", QuoteIdent(c.Name), d.columnType(c.Type))
	}
	b.WriteString(")")
	return b.String()
}

// indexes are the ones the tools' queries need to stay fast.
var indexes = map[string][]string{
	"mc_vendor_files":     {"vendor, market, hubzone"},
	"pbi_activity_events": {"tenant_id, activity_date"},
	"per_project":         {"tenant_id, name"},
	"per_projecthealth":   {"tenant_id, project_gid"},
	"per_tasks":           {"tenant_id, projectname"},
	"per_project45":       {"tenant_id, project_id"},
	"activeportfolio_mm":  {"tenant_id, project_id"},
	"changes":             {"tenant_id, dateofchange"},
}

// The price tools join mc_dayahead to the file dimension on (file_info_key,
// hubzone_key), filter by year (and month) and read hour and price. The
// covering index holds every column they read, so SQLite answers from the
// index alone and Postgres with an index-only scan, instead of visiting
// 8,760 table rows per file and year. It replaced the earlier index on
// (file_info_key, hubzone_key, year, month), which the migration drops.
const (
	priceIndex      = "base_mc_dayahead_cover"
	priceIndexCols  = "file_info_key, hubzone_key, year, month, hour, dayahead_price"
	priceIndexOlder = "base_mc_dayahead_ix0"
)

// PriceIndex is the name of the covering index of mc_dayahead's base table.
const PriceIndex = priceIndex

// priceIndexDDL creates the covering index (qualified names on Postgres)
// and drops the one it replaced.
func priceIndexDDL(schema string) []string {
	table, older := "base_mc_dayahead", priceIndexOlder
	if schema != "" {
		table, older = schema+"."+table, schema+"."+older
	}
	return []string{
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (%s)", priceIndex, table, priceIndexCols),
		"DROP INDEX IF EXISTS " + older,
	}
}
