// Package store holds the analyst's tables, as appdb migrations written once for SQLite and
// Postgres, and every query the app makes on them ([Tables]): the knowledge base's documents and
// the saved reports with their chunks. The app runs the migrations when it opens its database
// (analyst.New); no SQL lives outside this package.
package store

import "github.com/trellis-go/trellis/appdb"

// Migrations are the analyst's tables: the knowledge base's documents, and the saved reports
// with their chunks (rag_tool finds a report's chunks for its author only). The vectors are not
// here: they live in the server's store index (its embedder; pgvector on Postgres where
// installed).
var Migrations = []appdb.Migration{
	{Name: "analyst_documents", SQL: `CREATE TABLE documents (
		id TEXT NOT NULL, tenant_id TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL,
		metadata JSON NOT NULL, created_at TIMESTAMP NOT NULL,
		PRIMARY KEY (tenant_id, id))`,
		Scoped: []appdb.Scope{{Table: "documents"}}},
	{Name: "analyst_reports", SQL: `CREATE TABLE reports (
		id TEXT NOT NULL, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
		title TEXT NOT NULL, content TEXT NOT NULL, format TEXT NOT NULL, topic_tags JSON NOT NULL,
		project_name TEXT NOT NULL, structured JSON NOT NULL, created_at TIMESTAMP NOT NULL,
		PRIMARY KEY (tenant_id, id));
	CREATE INDEX reports_user ON reports (tenant_id, user_id, created_at);
	CREATE TABLE report_chunks (
		id TEXT NOT NULL, tenant_id TEXT NOT NULL, report_id TEXT NOT NULL, author_id TEXT NOT NULL,
		content TEXT NOT NULL, metadata JSON NOT NULL, created_at TIMESTAMP NOT NULL,
		PRIMARY KEY (tenant_id, id));
	CREATE INDEX report_chunks_report ON report_chunks (tenant_id, report_id)`,
		Scoped: []appdb.Scope{{Table: "reports", ByUser: true}, {Table: "report_chunks"}}},
}
