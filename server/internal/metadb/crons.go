package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Cron is a row of trellis_crons: a run started on a schedule.
type Cron struct {
	Tenant         string
	CronID         string
	AssistantID    string
	ThreadID       *string // nil: each tick's run is on a new thread
	UserID         *string
	OnRunCompleted *string
	// Principal is who created the cron, as JSON (the server's Principal): its runs are that
	// principal's.
	Principal json.RawMessage
	Schedule  string
	Payload   map[string]any
	Metadata  map[string]any
	// EndTime and NextRunDate are zero when unset.
	EndTime     time.Time
	NextRunDate time.Time
	Enabled     bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const cronCols = `tenant, cron_id, assistant_id, thread_id, user_id, principal, schedule, payload, metadata, on_run_completed, end_time, next_run_date, enabled, created_at, updated_at`

func scanCron(row scanner) (*Cron, error) {
	var c Cron
	var thread, user, onDone sql.NullString
	var princ, payload, md string
	var end, next, created, updated int64
	var enabled int
	if err := row.Scan(&c.Tenant, &c.CronID, &c.AssistantID, &thread, &user, &princ, &c.Schedule, &payload, &md, &onDone, &end, &next, &enabled, &created, &updated); err != nil {
		return nil, err
	}
	c.ThreadID, c.UserID, c.OnRunCompleted = stringPtr(thread), stringPtr(user), stringPtr(onDone)
	c.EndTime, c.NextRunDate = fromMSOrZero(end), fromMSOrZero(next)
	c.Enabled = enabled != 0
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	c.Principal = json.RawMessage(princ)
	c.Payload, c.Metadata = jsonObject(payload), jsonObject(md)
	return &c, nil
}

// InsertCron inserts a new cron.
func (m *DB) InsertCron(ctx context.Context, c *Cron) error {
	princ := string(c.Principal)
	if princ == "" {
		princ = "null"
	}
	_, err := m.Exec(ctx, `INSERT INTO trellis_crons (`+cronCols+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		c.Tenant, c.CronID, c.AssistantID, nullString(c.ThreadID), nullString(c.UserID), princ, c.Schedule,
		mustJSON(c.Payload), mustJSON(c.Metadata), nullString(c.OnRunCompleted), msOrZero(c.EndTime), msOrZero(c.NextRunDate),
		boolInt(c.Enabled), ms(c.CreatedAt), ms(c.UpdatedAt))
	return err
}

// UpdateCron writes every field of a cron a PATCH may change: schedule, payload, metadata,
// on_run_completed, end time, next run date, enabled, updated_at.
func (m *DB) UpdateCron(ctx context.Context, c *Cron) error {
	_, err := m.Exec(ctx, `UPDATE trellis_crons SET schedule = $1, payload = $2, metadata = $3, on_run_completed = $4,
end_time = $5, next_run_date = $6, enabled = $7, updated_at = $8 WHERE tenant = $9 AND cron_id = $10`,
		c.Schedule, mustJSON(c.Payload), mustJSON(c.Metadata), nullString(c.OnRunCompleted), msOrZero(c.EndTime),
		msOrZero(c.NextRunDate), boolInt(c.Enabled), ms(c.UpdatedAt), c.Tenant, c.CronID)
	return err
}

// GetCron reads a tenant's cron; ErrNotFound when it has none of that ID.
func (m *DB) GetCron(ctx context.Context, tenant, id string) (*Cron, error) {
	c, err := scanCron(m.queryRow(ctx, `SELECT `+cronCols+` FROM trellis_crons WHERE tenant = $1 AND cron_id = $2`, tenant, id))
	return c, notFound(err)
}

// DeleteCron deletes a tenant's cron.
func (m *DB) DeleteCron(ctx context.Context, tenant, id string) error {
	_, err := m.Exec(ctx, `DELETE FROM trellis_crons WHERE tenant = $1 AND cron_id = $2`, tenant, id)
	return err
}

// CronFilter narrows a cron search (SearchCrons, CountCrons); an empty field is any.
type CronFilter struct {
	UserID, AssistantID, ThreadID string
	Enabled                       *bool
	SortBy                        string // one of CronSortKeys; "" is created_at
	Asc                           bool
	Limit, Offset                 int // Limit 0: all
}

// CronSortKeys are the columns a cron search may sort by.
var CronSortKeys = []string{"cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"}

func (m *DB) cronWhere(tenant string, f CronFilter) (string, []any) {
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := `tenant = $1`
	if f.UserID != "" {
		where += ` AND user_id = ` + arg(f.UserID)
	}
	if f.AssistantID != "" {
		where += ` AND assistant_id = ` + arg(f.AssistantID)
	}
	if f.ThreadID != "" {
		where += ` AND thread_id = ` + arg(f.ThreadID)
	}
	if f.Enabled != nil {
		where += ` AND enabled = ` + arg(boolInt(*f.Enabled))
	}
	return where, args
}

// SearchCrons lists a tenant's crons that pass the filter, in its order.
func (m *DB) SearchCrons(ctx context.Context, tenant string, f CronFilter) ([]*Cron, error) {
	where, args := m.cronWhere(tenant, f)
	order := "created_at"
	if slices.Contains(CronSortKeys, f.SortBy) {
		order = f.SortBy
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	query := `SELECT ` + cronCols + ` FROM trellis_crons WHERE ` + where + ` ORDER BY ` + order + dir + `, cron_id` + dir
	if f.Limit > 0 {
		query += fmt.Sprintf(` LIMIT %d OFFSET %d`, f.Limit, f.Offset)
	}
	return queryAll(ctx, m, scanCron, query, args...)
}

// CountCrons counts a tenant's crons that pass the filter (its order and page aside).
func (m *DB) CountCrons(ctx context.Context, tenant string, f CronFilter) (int, error) {
	where, args := m.cronWhere(tenant, f)
	var n int
	err := m.db.QueryRowContext(ctx, m.Q(`SELECT count(*) FROM trellis_crons WHERE `+where), args...).Scan(&n)
	return n, err
}

// DueCrons returns up to limit enabled crons, of every tenant, whose next run date is at or
// before now and not after their end time.
func (m *DB) DueCrons(ctx context.Context, now time.Time, limit int) ([]*Cron, error) {
	return queryAll(ctx, m, scanCron, `SELECT `+cronCols+` FROM trellis_crons
WHERE enabled = 1 AND next_run_date > 0 AND next_run_date <= $1 AND (end_time = 0 OR next_run_date <= end_time)
ORDER BY next_run_date LIMIT $2`, ms(now), limit)
}

// ClaimCron moves a cron's next run date from the one seen (prev) to next, both in Unix
// milliseconds (0: none); it reports whether this call did it. Of several processes claiming
// the same tick, exactly one succeeds.
func (m *DB) ClaimCron(ctx context.Context, id string, prev, next int64) (bool, error) {
	res, err := m.Exec(ctx, `UPDATE trellis_crons SET next_run_date = $1 WHERE cron_id = $2 AND next_run_date = $3 AND enabled = 1`, next, id, prev)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
