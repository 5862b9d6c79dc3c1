package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Source says what the warehouse was loaded from: "generated" (the
// generated data set), "csv:<dir>" for real data, or "" when it holds none.
func (w *Warehouse) Source(ctx context.Context) (string, error) {
	var v string
	err := w.rw.QueryRowContext(ctx, "SELECT value FROM "+w.table("vesper_meta")+" WHERE key = 'loaded'").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("warehouse: read the load marker: %w", err)
	}
	// The marker is "<RFC 3339 load time> <source>".
	_, src, _ := strings.Cut(v, " ")
	return src, nil
}

// Clock is the clock the tools should use for relative dates ("last week",
// "last month"): for the generated data set the data's own date, [Today],
// at the current time of day, so that questions about recent changes and
// usage are answered on data that ends on that day; for real data the
// real clock.
func (w *Warehouse) Clock(ctx context.Context) (func() time.Time, error) {
	src, err := w.Source(ctx)
	if err != nil {
		return nil, err
	}
	if src != "generated" {
		return time.Now, nil
	}
	return func() time.Time {
		n := time.Now().UTC()
		return Today.Add(time.Duration(n.Hour())*time.Hour + time.Duration(n.Minute())*time.Minute + time.Duration(n.Second())*time.Second)
	}, nil
}
