// Package store keeps Rehabify's eight tables (user profiles, properties, portfolio items, room
// features, analyses, conversations, messages and the action log) on SQLite or Postgres through
// appdb, every row scoped to its tenant and user. Properties are visible only through the user's
// portfolio: on Postgres by a restrictive row-level policy, on SQLite (and on Postgres too, as
// the first wall) by the joins this package writes.
package store

import "github.com/trellis-go/trellis/appdb"

// Migrations are the tables and the specification's five indexes (each led by tenant_id, so
// the tenant's rows are found by index as appdb's conformance asks).
var Migrations = []appdb.Migration{
	{
		Name: "rehab_tables",
		SQL: `CREATE TABLE user_profiles (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
	name TEXT NOT NULL DEFAULT '', location TEXT NOT NULL DEFAULT '',
	fiscal JSON, budget JSON, renovation JSON, preferences JSON, goals JSON,
	fiscal_summary TEXT NOT NULL DEFAULT '', budget_summary TEXT NOT NULL DEFAULT '',
	renovation_summary TEXT NOT NULL DEFAULT '', preferences_summary TEXT NOT NULL DEFAULT '',
	goals_summary TEXT NOT NULL DEFAULT '', profile_summary TEXT NOT NULL DEFAULT '',
	memory JSON,
	created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, user_id));
CREATE TABLE properties (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL,
	idealista_id TEXT NOT NULL, url TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',
	typology TEXT NOT NULL DEFAULT '', price DOUBLE PRECISION NOT NULL DEFAULT 0,
	area_m2 DOUBLE PRECISION NOT NULL DEFAULT 0, location TEXT NOT NULL DEFAULT '',
	image_urls JSON, raw_scraped_data JSON, created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE UNIQUE INDEX properties_idealista ON properties (tenant_id, user_id, idealista_id);
CREATE TABLE portfolio_items (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL, property_id TEXT NOT NULL,
	nickname TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, is_active INTEGER NOT NULL DEFAULT 0,
	index_summary TEXT NOT NULL DEFAULT '', notes TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE INDEX portfolio_items_user_status ON portfolio_items (tenant_id, user_id, status);
CREATE TABLE room_features (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL, property_id TEXT NOT NULL,
	room_type TEXT NOT NULL, room_index INTEGER NOT NULL, area_m2 DOUBLE PRECISION NOT NULL DEFAULT 0,
	features JSON, created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE UNIQUE INDEX room_features_room ON room_features (tenant_id, user_id, property_id, room_type, room_index);
CREATE TABLE analyses (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL, property_id TEXT NOT NULL,
	analysis_type TEXT NOT NULL, result_data JSON, chat_summary TEXT NOT NULL DEFAULT '',
	detail_summary TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE INDEX analyses_lookup ON analyses (tenant_id, user_id, property_id, analysis_type, created_at);
CREATE TABLE conversations (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL,
	started_at TIMESTAMP NOT NULL, last_message_at TIMESTAMP NOT NULL, ended_at TIMESTAMP,
	summary TEXT NOT NULL DEFAULT '', summarized_count INTEGER NOT NULL DEFAULT 0,
	message_count INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (tenant_id, id));
CREATE INDEX conversations_user ON conversations (tenant_id, user_id, started_at);
CREATE TABLE messages (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL, conversation_id TEXT NOT NULL,
	role TEXT NOT NULL, content TEXT NOT NULL, tool_calls JSON, created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE INDEX messages_conversation ON messages (tenant_id, conversation_id, created_at);
CREATE TABLE action_log (
	tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL, conversation_id TEXT NOT NULL DEFAULT '',
	action_type TEXT NOT NULL, entity_type TEXT NOT NULL, entity_id TEXT NOT NULL DEFAULT '',
	field_changed TEXT NOT NULL DEFAULT '', old_value TEXT NOT NULL DEFAULT '', new_value TEXT NOT NULL DEFAULT '',
	trigger_message TEXT NOT NULL DEFAULT '', confidence DOUBLE PRECISION NOT NULL DEFAULT 1,
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE INDEX action_log_user_created ON action_log (tenant_id, user_id, created_at)`,
		Scoped: []appdb.Scope{
			{Table: "user_profiles", ByUser: true}, {Table: "properties", ByUser: true},
			{Table: "portfolio_items", ByUser: true}, {Table: "room_features", ByUser: true},
			{Table: "analyses", ByUser: true}, {Table: "conversations", ByUser: true},
			{Table: "messages", ByUser: true}, {Table: "action_log", ByUser: true},
		},
	},
	{
		// Properties are seen through the portfolio: a restrictive policy, so both it and
		// appdb's tenant-and-user policy must hold for a row to be read.
		Name:   "rehab_properties_through_portfolio",
		SQLite: `SELECT 1`,
		Postgres: `CREATE POLICY properties_portfolio ON properties AS RESTRICTIVE FOR SELECT USING (
	EXISTS (SELECT 1 FROM portfolio_items pi WHERE pi.tenant_id = properties.tenant_id
		AND pi.user_id = properties.user_id AND pi.property_id = properties.id))`,
	},
}
