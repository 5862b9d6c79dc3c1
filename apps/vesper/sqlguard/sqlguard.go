package sqlguard

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgquery "github.com/wasilibs/go-pgquery"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

// ErrRejected is wrapped by every *RejectedError.
var ErrRejected = errors.New("sqlguard: query rejected")

// RejectedError says why a query was refused and what to do instead.
type RejectedError struct {
	Reason string // what is wrong
	Hint   string // what to write instead
	Offset int    // byte offset in the query, -1 if unknown
}

func (e *RejectedError) Error() string {
	msg := "sqlguard: query rejected: " + e.Reason
	if e.Offset >= 0 {
		msg += fmt.Sprintf(" (at byte %d)", e.Offset)
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

func (e *RejectedError) Unwrap() error { return ErrRejected }

func reject(offset int, hint, format string, args ...any) error {
	return &RejectedError{Reason: fmt.Sprintf(format, args...), Hint: hint, Offset: offset}
}

// Options configures a Guard. The zero value approves the warehouse's
// views and DefaultFunctions.
type Options struct {
	// Views are the relations a query may read (default warehouse.ViewNames()).
	Views []string
	// Functions are the functions a query may call, lower case, without a
	// schema (default DefaultFunctions).
	Functions []string
	// MaxLength is the longest query accepted, in bytes (default 8000).
	MaxLength int
}

// DefaultFunctions are the functions general_sql_query may call: aggregates,
// window functions and scalar functions with no side effects and no access
// to anything but their arguments.
var DefaultFunctions = []string{
	"count", "sum", "avg", "min", "max", "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop",
	"string_agg", "group_concat", "percentile_cont", "percentile_disc", "bool_and", "bool_or",
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value",
	"round", "abs", "ceil", "ceiling", "floor", "trunc", "power", "sqrt", "ln", "log", "exp", "sign", "mod",
	"lower", "upper", "length", "char_length", "substr", "substring", "btrim", "ltrim", "rtrim", "trim", "replace",
	"concat", "left", "right", "position", "strpos", "split_part",
	"extract", "date_part", "date_trunc", "to_char", "strftime", "date", "make_date",
}

// castTypes are the types a query may cast to.
var castTypes = map[string]bool{
	"int2": true, "int4": true, "int8": true, "int": true, "integer": true, "bigint": true, "smallint": true,
	"numeric": true, "decimal": true, "float4": true, "float8": true, "real": true, "float": true,
	"text": true, "varchar": true, "bpchar": true, "char": true, "date": true, "timestamp": true, "timestamptz": true,
	"bool": true, "boolean": true, "interval": true,
}

// nodeTypes are the parse-tree nodes a query may contain. Anything else,
// from INSERT inside a CTE to SELECT ... INTO or FOR UPDATE, is refused.
var nodeTypes = map[protoreflect.Name]bool{
	"Node": true, "List": true, "RawStmt": true, "SelectStmt": true, "ResTarget": true, "ColumnRef": true,
	"String": true, "Integer": true, "Float": true, "Boolean": true, "A_Const": true, "A_Star": true,
	"A_Expr": true, "BoolExpr": true, "NullTest": true, "BooleanTest": true, "FuncCall": true, "WindowDef": true,
	"SortBy": true, "RangeVar": true, "RangeSubselect": true, "JoinExpr": true, "Alias": true, "SubLink": true,
	"CaseExpr": true, "CaseWhen": true, "CoalesceExpr": true, "MinMaxExpr": true, "TypeCast": true,
	"TypeName": true, "WithClause": true, "CommonTableExpr": true, "SQLValueFunction": true, "RowExpr": true,
	"GroupingSet": true, "A_ArrayExpr": true, "NullIfExpr": true,
}

var nodeWords = map[protoreflect.Name]string{
	"IntoClause": "SELECT ... INTO creates a table", "LockingClause": "locking clauses (FOR UPDATE, FOR SHARE) take locks",
	"InsertStmt": "INSERT changes data", "UpdateStmt": "UPDATE changes data", "DeleteStmt": "DELETE changes data",
	"MergeStmt": "MERGE changes data", "ParamRef": "$n parameters have no values here",
	"RangeFunction": "functions in FROM are not allowed", "RangeTableSample": "TABLESAMPLE is not allowed",
	"CollateClause": "COLLATE is not allowed",
}

// Guard checks the SQL of general_sql_query. It is safe for concurrent use.
type Guard struct {
	views     map[string]bool
	funcs     map[string]bool
	maxLength int
}

// New returns a Guard; a nil opts means the zero Options.
func New(opts *Options) *Guard {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Views == nil {
		o.Views = warehouse.ViewNames()
	}
	if o.Functions == nil {
		o.Functions = DefaultFunctions
	}
	if o.MaxLength == 0 {
		o.MaxLength = 8000
	}
	g := &Guard{views: map[string]bool{}, funcs: map[string]bool{}, maxLength: o.MaxLength}
	for _, v := range o.Views {
		g.views[strings.ToLower(v)] = true
	}
	for _, f := range o.Functions {
		g.funcs[strings.ToLower(f)] = true
	}
	return g
}

// Checked is an accepted query.
type Checked struct {
	// SQL is the query as given, without surrounding blanks or a final
	// semicolon, ready for warehouse.Query.
	SQL string
	// Views are the approved views it reads, sorted.
	Views []string
}

// Check accepts only one plain SELECT (WITH, UNION, joins, subqueries,
// aggregates and window functions are fine) that reads nothing but the
// approved views and calls nothing but the allowed functions. It parses
// with the PostgreSQL parser itself and walks the whole tree, so what it
// accepts is decided by the grammar, not by keywords in the text.
func (g *Guard) Check(sql string) (*Checked, error) {
	if strings.TrimSpace(sql) == "" {
		return nil, reject(-1, "write one SELECT statement", "the query is empty")
	}
	if len(sql) > g.maxLength {
		return nil, reject(-1, "shorten it or use one of the domain tools", "the query is %d bytes; the limit is %d", len(sql), g.maxLength)
	}
	if strings.IndexByte(sql, 0) >= 0 {
		return nil, reject(strings.IndexByte(sql, 0), "remove it", "the query contains a NUL byte")
	}
	end, err := g.lex(sql)
	if err != nil {
		return nil, err
	}
	tree, err := pgquery.Parse(sql)
	if err != nil {
		return nil, reject(-1, "check the SQL syntax (PostgreSQL dialect)", "the query does not parse: %v", err)
	}
	if n := len(tree.GetStmts()); n != 1 {
		return nil, reject(-1, "send one SELECT statement without a second one after a semicolon", "the text holds %d statements", n)
	}
	raw := tree.GetStmts()[0]
	sel := raw.GetStmt().GetSelectStmt()
	if sel == nil {
		return nil, reject(-1, "only SELECT queries can run here", "the statement is not a SELECT")
	}
	w := walker{g: g, ctes: map[string]bool{}, used: map[string]bool{}}
	collectCTEs(raw.ProtoReflect(), w.ctes)
	for name := range w.ctes {
		if g.views[name] {
			return nil, reject(-1, "give the CTE another name", "the WITH query %q has the name of an approved view", name)
		}
	}
	if err := checkCTEOrder(raw.GetStmt().ProtoReflect(), nil, w.ctes, 0); err != nil {
		return nil, err
	}
	if err := w.walk(raw.GetStmt().ProtoReflect()); err != nil {
		return nil, err
	}
	views := make([]string, 0, len(w.used))
	for v := range w.used {
		views = append(views, v)
	}
	sort.Strings(views)
	return &Checked{SQL: strings.TrimSpace(sql[:end]), Views: views}, nil
}

// lex scans the query with the PostgreSQL lexer and refuses the lexical
// forms on which PostgreSQL and SQLite disagree (so both read the same
// statement): comments, dollar-quoted, escape, bit and Unicode strings, and
// quoted identifiers with escapes. It returns the end of the statement
// before any final semicolons.
func (g *Guard) lex(sql string) (int, error) {
	scan, err := pgquery.Scan(sql)
	if err != nil {
		return 0, reject(-1, "check quotes and comments", "the query cannot be tokenised: %v", err)
	}
	end := len(sql)
	toks := scan.GetTokens()
	for i, t := range toks {
		text := sql[t.Start:t.End]
		switch t.Token {
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT:
			return 0, reject(int(t.Start), "remove the comment", "comments are not allowed")
		case pg.Token_SCONST:
			if !strings.HasPrefix(text, "'") {
				return 0, reject(int(t.Start), "write strings in plain single quotes", "only plain 'quoted' strings are allowed, not %q", firstRunes(text, 12))
			}
		case pg.Token_BCONST, pg.Token_XCONST, pg.Token_UIDENT, pg.Token_USCONST:
			return 0, reject(int(t.Start), "write strings in plain single quotes", "bit, hex and Unicode-escape literals are not allowed")
		case pg.Token_PARAM:
			return 0, reject(int(t.Start), "write the values into the query", "$n parameters are not allowed")
		case pg.Token_ASCII_58, pg.Token_ASCII_36: // ':' and '$' alone: SQLite reads :name and $name as parameters
			return 0, reject(int(t.Start), "write the values into the query", "parameters such as :name or $name are not allowed")
		case pg.Token_Op:
			// SQLite reads ?, ?1 and @name as parameters; PostgreSQL reads them as operators.
			if strings.ContainsAny(text, "?@") {
				return 0, reject(int(t.Start), "write the values into the query", "parameters such as ?1 or @name (and the operators spelt with ? or @) are not allowed")
			}
		case pg.Token_ASCII_59: // ';'
			for _, rest := range toks[i+1:] {
				if rest.Token != pg.Token_ASCII_59 {
					return 0, reject(int(t.Start), "send one statement only", "a second statement follows a semicolon")
				}
			}
			if int(t.Start) < end {
				end = int(t.Start)
			}
		}
	}
	return end, nil
}

func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

func collectCTEs(m protoreflect.Message, out map[string]bool) {
	if cte, ok := m.Interface().(*pg.CommonTableExpr); ok {
		out[strings.ToLower(cte.GetCtename())] = true
	}
	_ = rangeChildren(m, func(child protoreflect.Message, _ protoreflect.FieldDescriptor) error {
		collectCTEs(child, out)
		return nil
	})
}

type walker struct {
	g     *Guard
	ctes  map[string]bool
	used  map[string]bool
	depth int
}

func (w *walker) walk(m protoreflect.Message) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > 200 {
		return reject(-1, "simplify the query", "the query nests too deeply")
	}
	name := m.Descriptor().Name()
	if !nodeTypes[name] {
		if why, ok := nodeWords[name]; ok {
			return reject(-1, "only plain reads of the approved views can run here", "%s", why)
		}
		return reject(-1, "only plain reads of the approved views can run here", "%s is not allowed", name)
	}
	if err := w.check(m.Interface()); err != nil {
		return err
	}
	return rangeChildren(m, func(child protoreflect.Message, _ protoreflect.FieldDescriptor) error { return w.walk(child) })
}

func (w *walker) check(n any) error {
	switch x := n.(type) {
	case *pg.SelectStmt:
		if x.GetIntoClause() != nil {
			return reject(-1, "drop the INTO clause", "SELECT ... INTO creates a table")
		}
		if len(x.GetLockingClause()) > 0 {
			return reject(-1, "drop FOR UPDATE / FOR SHARE", "locking clauses take locks")
		}
		if err := checkCrossAggregate(x); err != nil {
			return err
		}
	case *pg.WithClause:
		if x.GetRecursive() {
			return reject(int(x.GetLocation()), "write the query without RECURSIVE", "recursive queries are not allowed")
		}
	case *pg.RangeVar:
		rel := strings.ToLower(x.GetRelname())
		if x.GetSchemaname() != "" || x.GetCatalogname() != "" {
			return reject(int(x.GetLocation()), fmt.Sprintf("write %s without a schema", rel), "schema-qualified names such as %s.%s are not allowed", x.GetSchemaname(), rel)
		}
		if w.ctes[rel] {
			return nil
		}
		if !w.g.views[rel] {
			return reject(int(x.GetLocation()), "read one of the approved views: "+strings.Join(w.g.viewList(), ", "), "%q is not an approved view", x.GetRelname())
		}
		w.used[rel] = true
	case *pg.FuncCall:
		names := x.GetFuncname()
		var parts []string
		for _, nm := range names {
			parts = append(parts, strings.ToLower(nm.GetString_().GetSval()))
		}
		if len(parts) == 2 && parts[0] == "pg_catalog" {
			parts = parts[1:] // the parser's own spelling of EXTRACT, TRIM, SUBSTRING ...
		}
		if len(parts) != 1 || !w.g.funcs[parts[0]] {
			return reject(int(x.GetLocation()), "use aggregates and plain scalar functions only", "function %s is not allowed", strings.Join(parts, "."))
		}
		if x.GetFuncVariadic() {
			return reject(int(x.GetLocation()), "pass the arguments one by one", "VARIADIC calls are not allowed")
		}
		if parts[0] == "replace" {
			if err := checkReplace(x); err != nil {
				return err
			}
		}
	case *pg.TypeCast:
		var parts []string
		for _, nm := range x.GetTypeName().GetNames() {
			parts = append(parts, strings.ToLower(nm.GetString_().GetSval()))
		}
		if len(parts) == 2 && parts[0] == "pg_catalog" {
			parts = parts[1:]
		}
		if len(parts) != 1 || !castTypes[parts[0]] {
			return reject(int(x.GetLocation()), "cast to a number, text, date or timestamp type", "cast to %s is not allowed", strings.Join(parts, "."))
		}
	case *pg.SQLValueFunction:
		switch x.GetOp() {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP,
			pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP,
			pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		default:
			return reject(int(x.GetLocation()), "only CURRENT_DATE and CURRENT_TIMESTAMP are available", "session functions such as CURRENT_USER are not allowed")
		}
	}
	return nil
}

func (g *Guard) viewList() []string {
	out := make([]string, 0, len(g.views))
	for v := range g.views {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// Warm loads the parser (a WebAssembly module compiled on first use, which
// takes a few seconds on a small machine), so that the first real query
// does not wait for it. Servers call it at start-up, in the background.
func Warm() {
	_, _ = pgquery.Parse("SELECT 1")
}
