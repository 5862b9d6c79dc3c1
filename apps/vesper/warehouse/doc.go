// Package warehouse is the data layer of the Vesper Analytics chatbot: the
// nine approved views the tools query, on SQLite or Postgres, a
// deterministic generator of demonstration data, CSV loading of real data,
// and the one executor every query goes through.
//
// # Opening
//
//	w, err := warehouse.Open(ctx, warehouse.Config{})            // vesper.db, generated data
//	w, err := warehouse.Open(ctx, warehouse.Config{
//		Dialect: warehouse.Postgres, DSN: "postgres://...", CSVDir: "data/"})
//
// Open creates what is missing (tables, views, and on Postgres the reader
// and owner roles and the row-level security policies) and loads an empty
// warehouse once: from Config.CSVDir when set, otherwise from Generate().
//
// # The views
//
// Views lists them with their columns: mc_vendor_files and mc_dayahead
// (vendor curve files and their hourly day-ahead prices; shared by all
// tenants), pbi_activity_events (report usage), and the six project
// execution views per_project, per_projecthealth, per_tasks, per_project45,
// activeportfolio_mm and changes. Every view but the two market views has a
// tenant_id column and is tenant-scoped. Rows live in base_<view> tables
// that queries never name.
//
// Two things serve the price tools. The covering index [PriceIndex] on
// mc_dayahead's base table holds every column price queries read, so
// SQLite answers them from the index and Postgres with an index-only scan
// (loading VACUUMs the table for that). The rollup view [PriceRollup],
// mc_dayahead_hourly, holds the hourly prices summed by file, hub-zone,
// year, month and hour of day (hours, priced hours, sum, min, max); it is
// rebuilt whenever prices are loaded (and on Open when missing), and the
// price tools read it: 288 rows per file and year instead of 8,760, with
// the same means, minima and maxima. It is not an approved view.
//
// # Querying
//
// Query(ctx, tenant, sql, args...) runs one read-only statement for one
// tenant with $1, $2, ... placeholders on both dialects, returns at most
// Config.MaxRows rows (500; Result.Truncated and Result.Note say when more
// matched), and stops after Config.Timeout (10s) with ErrTimeout.
//
// On Postgres each query runs in a read-only transaction that sets
// vesper.tenant with set_config(..., true) (transaction-local) and switches
// to the reader role, which may read the views and nothing else; the views
// belong to an owner role that is subject to the row-level security
// policies on the base tables, so a view shows only the tenant's rows.
//
// On SQLite queries use a second connection opened read-only (mode=ro,
// query_only), and ScopeSQLite puts one common table expression per tenant
// view in front of the statement, so every mention of the view, at any
// depth, sees only the tenant's rows.
//
// # Generated data
//
// Generate is deterministic: the same call gives the same rows. It covers
// two vendors (Ascend, Hitachi), four As-Of files, ten hub-zones in six
// markets, hourly from 2024 to 2026 with daily and seasonal shape (547,752
// price rows, loaded in a few seconds), a year of report usage for
// two tenants, and 33 projects with their health, tasks, budgets, milestone
// snapshots and change log. Some figures are pinned to the specification's
// example conversations (NP15 Ascend 2025 averages $48.73/MWh). The data
// ends on [Today]; Warehouse.Clock gives the clock relative dates should
// use ("last week" is the data's last week for the generated data set).
package warehouse
