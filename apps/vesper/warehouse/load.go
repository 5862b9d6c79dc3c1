package warehouse

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Load replaces the rows of every view with the data set's, in one
// transaction, and marks the warehouse as loaded.
func (w *Warehouse) Load(ctx context.Context, d *Dataset) error {
	src := map[string]iter.Seq2[[]any, error]{}
	for _, v := range Views {
		src[v.Name] = noErr(d.Rows(v.Name))
	}
	return w.load(ctx, src, "generated")
}

func noErr(s iter.Seq[[]any]) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for row := range s {
			if !yield(row, nil) {
				return
			}
		}
	}
}

// LoadCSVDir loads real data: for each view, the file <dir>/<view>.csv if it
// exists. Views without a file are left as they are. All files are read in
// one transaction: a bad value anywhere loads nothing.
func (w *Warehouse) LoadCSVDir(ctx context.Context, dir string) error {
	src := map[string]iter.Seq2[[]any, error]{}
	var found int
	for _, v := range Views {
		path := filepath.Join(dir, v.Name+".csv")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		found++
		src[v.Name] = csvRows(v, path)
	}
	if found == 0 {
		return &LoadError{File: dir, Err: fmt.Errorf("no <view>.csv files found; expected names such as %s.csv", Views[0].Name)}
	}
	return w.load(ctx, src, "csv:"+dir)
}

func csvRows(v View, path string) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			yield(nil, &LoadError{View: v.Name, File: path, Err: err})
			return
		}
		defer f.Close()
		for row, err := range ParseCSV(v, f) {
			if err != nil {
				var le *LoadError
				if errors.As(err, &le) {
					le.File = path
				}
			}
			if !yield(row, err) || err != nil {
				return
			}
		}
	}
}

// ParseCSV reads rows of a view from CSV with a header row. The header must
// name every column of the view (case-insensitive, any order) and nothing
// else. Empty fields are NULL, except in text columns. Dates may be written
// 2006-01-02, 2006-01-02 15:04:05 or 1/2/2006.
func ParseCSV(v View, r io.Reader) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		cr := csv.NewReader(r)
		cr.ReuseRecord = true
		header, err := cr.Read()
		if err != nil {
			yield(nil, &LoadError{View: v.Name, Line: 1, Err: fmt.Errorf("read header: %w", err)})
			return
		}
		pos := make([]int, len(v.Columns)) // view column -> csv field
		for i := range pos {
			pos[i] = -1
		}
		for j, h := range header {
			h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
			found := false
			for i, c := range v.Columns {
				if strings.EqualFold(c.Name, h) {
					pos[i], found = j, true
				}
			}
			if !found {
				yield(nil, &LoadError{View: v.Name, Line: 1, Column: h, Err: fmt.Errorf("unknown column; %s has columns %s", v.Name, columnList(v))})
				return
			}
		}
		var missing []string
		for i, p := range pos {
			if p < 0 {
				missing = append(missing, v.Columns[i].Name)
			}
		}
		if len(missing) > 0 {
			yield(nil, &LoadError{View: v.Name, Line: 1, Err: fmt.Errorf("header lacks column(s) %s", strings.Join(missing, ", "))})
			return
		}
		line := 1
		for {
			rec, err := cr.Read()
			line++
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, &LoadError{View: v.Name, Line: line, Err: err})
				return
			}
			row := make([]any, len(v.Columns))
			for i, c := range v.Columns {
				val, err := parseValue(c.Type, rec[pos[i]])
				if err != nil {
					yield(nil, &LoadError{View: v.Name, Line: line, Column: c.Name, Err: err})
					return
				}
				row[i] = val
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}

var dateLayouts = []string{"2006-01-02", "2006-01-02 15:04:05", "2006-01-02T15:04:05Z07:00", "1/2/2006"}

func parseValue(t ColumnType, s string) (any, error) {
	if t == Text {
		return s, nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	switch t {
	case Int:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return n, nil
	case Real:
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	default:
		for _, l := range dateLayouts {
			if d, err := time.Parse(l, s); err == nil {
				return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC), nil
			}
		}
		return nil, fmt.Errorf("%q is not a date; write it as 2006-01-02", s)
	}
}

func (w *Warehouse) load(ctx context.Context, src map[string]iter.Seq2[[]any, error], source string) error {
	var err error
	if w.cfg.Dialect == Postgres {
		err = w.loadPostgres(ctx, src, source)
	} else {
		err = w.loadSQLite(ctx, src, source)
	}
	if err != nil {
		return err
	}
	if _, ok := src["mc_dayahead"]; ok {
		return w.RebuildRollup(ctx)
	}
	return nil
}

func (w *Warehouse) loadSQLite(ctx context.Context, src map[string]iter.Seq2[[]any, error], source string) error {
	tx, err := w.rw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, v := range Views {
		rows, ok := src[v.Name]
		if !ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+v.BaseTable()); err != nil {
			return err
		}
		if err := insertBatches(ctx, tx, v, rows); err != nil {
			return err
		}
	}
	if err := markLoaded(ctx, tx, "vesper_meta", source); err != nil {
		return err
	}
	return tx.Commit()
}

func markLoaded(ctx context.Context, tx *sql.Tx, table, source string) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (key, value) VALUES ('loaded', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", table),
		time.Now().UTC().Format(time.RFC3339)+" "+source)
	return err
}

func insertBatches(ctx context.Context, tx *sql.Tx, v View, rows iter.Seq2[[]any, error]) error {
	const batch = 100
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(v.Columns)), ",") + ")"
	prefix := fmt.Sprintf("INSERT INTO %s (%s) VALUES ", v.BaseTable(), columnList(v))
	full, err := tx.PrepareContext(ctx, prefix+strings.TrimSuffix(strings.Repeat(one+",", batch), ","))
	if err != nil {
		return err
	}
	defer full.Close()
	args := make([]any, 0, batch*len(v.Columns))
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		var err error
		if n == batch {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, prefix+strings.TrimSuffix(strings.Repeat(one+",", n), ","), args...)
		}
		args, n = args[:0], 0
		return err
	}
	for row, err := range rows {
		if err != nil {
			return err
		}
		if len(row) != len(v.Columns) {
			return &LoadError{View: v.Name, Err: fmt.Errorf("row has %d values, want %d", len(row), len(v.Columns))}
		}
		for i, val := range row {
			if t, ok := val.(time.Time); ok && v.Columns[i].Type == Date {
				val = t.Format("2006-01-02")
			}
			args = append(args, val)
		}
		n++
		if n == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func (w *Warehouse) loadPostgres(ctx context.Context, src map[string]iter.Seq2[[]any, error], source string) error {
	conn, err := w.rw.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		tx, err := pc.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		for _, v := range Views {
			rows, ok := src[v.Name]
			if !ok {
				continue
			}
			if _, err := tx.Exec(ctx, "DELETE FROM "+w.table(v.BaseTable())); err != nil {
				return err
			}
			names := make([]string, len(v.Columns))
			for i, c := range v.Columns {
				names[i] = c.Name
			}
			next, stop := iter.Pull2(rows)
			var rowErr error
			var cur []any
			_, err := tx.CopyFrom(ctx, pgx.Identifier{w.cfg.Schema, v.BaseTable()}, names, pgx.CopyFromFunc(func() ([]any, error) {
				row, err, ok := next()
				if !ok {
					return nil, nil
				}
				if err != nil {
					rowErr = err
					return nil, err
				}
				if len(row) != len(v.Columns) {
					rowErr = &LoadError{View: v.Name, Err: fmt.Errorf("row has %d values, want %d", len(row), len(v.Columns))}
					return nil, rowErr
				}
				cur = row
				return cur, nil
			}))
			stop()
			if rowErr != nil {
				return rowErr
			}
			if err != nil {
				return fmt.Errorf("warehouse: copy into %s: %w", v.Name, err)
			}
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO %s (key, value) VALUES ('loaded', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", w.table("vesper_meta")),
			time.Now().UTC().Format(time.RFC3339)+" "+source); err != nil {
			return err
		}
		for _, v := range Views {
			if _, err := tx.Exec(ctx, "ANALYZE "+w.table(v.BaseTable())); err != nil {
				return err
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		// VACUUM (outside the transaction) sets the visibility map, without
		// which the planner cannot use the price index for index-only scans.
		if _, ok := src["mc_dayahead"]; ok {
			if _, err := pc.Exec(ctx, "VACUUM "+w.table("base_mc_dayahead")); err != nil {
				return fmt.Errorf("warehouse: vacuum the price table: %w", err)
			}
		}
		return nil
	})
}
