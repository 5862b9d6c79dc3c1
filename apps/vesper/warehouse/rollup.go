package warehouse

import (
	"context"
	"database/sql"
	"fmt"
)

// PriceRollup is the view of hourly prices rolled up by file, hub-zone, year,
// month and hour of day: for each group the number of hours, the number of
// priced hours and the sum, minimum and maximum of the price. It is derived
// from mc_dayahead whenever prices are loaded, and holds exactly what the
// price tools compute (annual and monthly means, means, minima and maxima by
// hour of day, peak-hour means), 288 rows per file, hub-zone and year
// instead of 8,760: the pure-Go SQLite reads a few hundred rows per question
// instead of tens of thousands. Means are sums over counts, so they equal
// AVG over the hourly rows up to floating-point rounding.
//
// It is not one of the approved views: general_sql_query reads mc_dayahead
// itself (through the covering index [PriceIndex]).
const PriceRollup = "mc_dayahead_hourly"

var rollupColumns = cols(`file_info_key:text, hubzone_key:text, year:int, month:int, hour:int,
	hours:int, priced:int, price_sum:real, price_min:real, price_max:real`)

func rollupTable(schema string) string {
	if schema == "" {
		return "base_" + PriceRollup
	}
	return schema + ".base_" + PriceRollup
}

// rollupDDL creates the rollup's table and view; on Postgres the view
// belongs to the owner role and the reader may select it, as for the
// approved views.
func rollupDDL(d Dialect, schema, reader, owner string) []string {
	table := rollupTable(schema)
	var defs string
	for _, c := range rollupColumns {
		defs += fmt.Sprintf("%s %s, ", c.Name, d.columnType(c.Type))
	}
	key := "PRIMARY KEY (file_info_key, hubzone_key, year, month, hour)"
	names := "file_info_key, hubzone_key, year, month, hour, hours, priced, price_sum, price_min, price_max"
	if d == SQLite {
		return []string{
			fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s%s) WITHOUT ROWID", table, defs, key),
			fmt.Sprintf("CREATE VIEW IF NOT EXISTS %s AS SELECT %s FROM %s", PriceRollup, names, table),
		}
	}
	view := schema + "." + PriceRollup
	return []string{
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s%s)", table, defs, key),
		fmt.Sprintf("GRANT SELECT ON %s TO %s", table, owner),
		fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT %s FROM %s", view, names, table),
		fmt.Sprintf("ALTER VIEW %s OWNER TO %s", view, owner),
		fmt.Sprintf("GRANT SELECT ON %s TO %s", view, reader),
	}
}

// rollupSQL rebuilds the rollup from the hourly table.
func rollupSQL(schema string) []string {
	base := "base_mc_dayahead"
	if schema != "" {
		base = schema + "." + base
	}
	table := rollupTable(schema)
	return []string{
		"DELETE FROM " + table,
		fmt.Sprintf(`INSERT INTO %s (file_info_key, hubzone_key, year, month, hour, hours, priced, price_sum, price_min, price_max)
			SELECT file_info_key, hubzone_key, year, month, hour, COUNT(*), COUNT(dayahead_price),
				SUM(dayahead_price), MIN(dayahead_price), MAX(dayahead_price)
			FROM %s
			WHERE file_info_key IS NOT NULL AND hubzone_key IS NOT NULL AND year IS NOT NULL AND month IS NOT NULL AND hour IS NOT NULL
			GROUP BY file_info_key, hubzone_key, year, month, hour`, table, base),
	}
}

// rollupMarker is the vesper_meta key saying the rollup matches the prices.
const rollupMarker = "price_rollup"

// RebuildRollup recomputes the price rollup from mc_dayahead. Loading does it;
// call it after changing the price table by other means.
func (w *Warehouse) RebuildRollup(ctx context.Context) error {
	tx, err := w.rw.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("warehouse: rebuild the price rollup: %w", err)
	}
	defer tx.Rollback()
	if err := rebuildRollup(ctx, tx, w.cfg.Dialect, w.schemaName()); err != nil {
		return err
	}
	return tx.Commit()
}

func rebuildRollup(ctx context.Context, tx *sql.Tx, d Dialect, schema string) error {
	stmts := rollupSQL(schema)
	meta := "vesper_meta"
	if schema != "" {
		meta = schema + "." + meta
	}
	stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (key, value) VALUES ('%s', '1') ON CONFLICT (key) DO UPDATE SET value = excluded.value", meta, rollupMarker))
	if d == Postgres {
		stmts = append(stmts, "ANALYZE "+rollupTable(schema))
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("warehouse: rebuild the price rollup: %w", err)
		}
	}
	return nil
}

// rollupBuilt reports whether the rollup was built since the table was
// created (a warehouse loaded before the rollup existed has no marker).
func (w *Warehouse) rollupBuilt(ctx context.Context) (bool, error) {
	var n int
	err := w.rw.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+w.table("vesper_meta")+" WHERE key = '"+rollupMarker+"'").Scan(&n)
	if err != nil {
		return false, fmt.Errorf("warehouse: read the rollup marker: %w", err)
	}
	return n > 0, nil
}

func (w *Warehouse) schemaName() string {
	if w.cfg.Dialect == Postgres {
		return w.cfg.Schema
	}
	return ""
}
