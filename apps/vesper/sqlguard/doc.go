// Package sqlguard decides whether a query written by a model may run
// through the general_sql_query escape hatch.
//
// A Guard accepts exactly one SELECT that reads only the approved views and
// calls only allowed functions. It does not look for keywords: it parses
// the text with PostgreSQL's own parser (libpg_query, compiled to
// WebAssembly and run in pure Go by github.com/wasilibs/go-pgquery) and
// walks every node of the tree against an allowlist of node types. So a
// data-modifying CTE is refused because InsertStmt is not an allowed node,
// SELECT ... INTO because IntoClause is not, FOR UPDATE because
// LockingClause is not; pg_sleep, pg_read_file, lo_import, dblink and
// set_config because they are not allowed functions; COPY, DO, CALL and
// stacked statements because the text must hold one SELECT.
//
// Before parsing, the query is scanned with the same parser's lexer and
// lexical forms that SQLite would read differently are refused (comments,
// dollar-quoted, escape, bit and Unicode strings), so the statement SQLite
// runs is the statement PostgreSQL checked.
//
//	g := sqlguard.New(nil)
//	checked, err := g.Check("SELECT vendor, COUNT(*) FROM mc_vendor_files GROUP BY vendor")
//	if err != nil { /* *RejectedError: Reason and Hint for the user */ }
//	res, err := w.Query(ctx, tenant, checked.SQL)
//
// The guard is one layer of several: queries still run read-only, as a
// role that can read only the views, scoped to one tenant, capped at 500
// rows and 10 seconds (see package warehouse).
package sqlguard
