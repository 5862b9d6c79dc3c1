package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/trellis-go/trellis/server/internal/periodic"
)

// Crons: runs started on a schedule, as LangGraph's /runs/crons routes offer them. A cron holds
// a run's payload (input, config, ...), a standard 5-field schedule read in UTC, an optional end
// time, and the principal that created it; a stateless cron (POST /runs/crons) starts each tick
// on a new thread, a thread's cron (POST /threads/{id}/runs/crons) on that thread.
//
// Every process runs a scheduler loop (every cronPoll) that looks for enabled crons whose
// next_run_date has come and claims each with a compare-and-swap update of next_run_date in the
// metadata database: of several replicas polling the same database, exactly one moves a cron's
// next_run_date from the tick it saw to the next one, and only that one starts the tick's run.
// The run is created as an API request creates one (runner.create), so it goes on the run queue
// with the tenant's limits. Ticks missed while no process ran are not made up: the next run date
// is computed from the time of the claim.

// cronPoll is how often each process looks for due crons.
const cronPoll = 5 * time.Second

// cronParser reads standard 5-field cron expressions (minute hour day-of-month month day-of-week),
// with the @hourly style descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Cron is a scheduled run, as the LangGraph SDK's client.crons reads it.
type Cron struct {
	CronID         string         `json:"cron_id"`
	AssistantID    string         `json:"assistant_id"`
	ThreadID       *string        `json:"thread_id"`
	OnRunCompleted *string        `json:"on_run_completed,omitempty"`
	EndTime        *time.Time     `json:"end_time"`
	Schedule       string         `json:"schedule"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	Payload        map[string]any `json:"payload"`
	UserID         *string        `json:"user_id"`
	NextRunDate    *time.Time     `json:"next_run_date"`
	Metadata       map[string]any `json:"metadata"`
	Enabled        bool           `json:"enabled"`
	tenant         string
	principal      Principal
	nextMS         int64
}

// cronState is the server's cron scheduler: its clock (replaced by tests) and its loop.
type cronState struct {
	clock atomic.Pointer[func() time.Time]
	// ticking serialises this process's ticks (the loop's and a test's).
	ticking sync.Mutex
}

// cronNow is the scheduler's time, in UTC.
func (s *Server) cronNow() time.Time {
	if f := s.crons.clock.Load(); f != nil {
		return (*f)().UTC()
	}
	return time.Now().UTC()
}

// setCronClock replaces the scheduler's clock (tests).
func (s *Server) setCronClock(f func() time.Time) { s.crons.clock.Store(&f) }

// startCronScheduler runs the scheduler loop until the returned stop is called.
func (s *Server) startCronScheduler() (stop func()) {
	return periodic.Every(cronPoll, func(ctx context.Context) { s.tickCrons(ctx) })
}

// parseSchedule checks a cron schedule; a bad one is a 400 naming the field.
func parseSchedule(field, spec string) (cron.Schedule, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, badRequest(`send a 5-field cron expression in UTC (minute hour day-of-month month day-of-week), e.g. "*/5 * * * *"`, "field %q is required", field)
	}
	sched, err := cronParser.Parse(spec)
	if err != nil {
		return nil, badRequest(`send a 5-field cron expression in UTC (minute hour day-of-month month day-of-week), e.g. "*/5 * * * *" or "0 9 * * 1"`, "field %q is not a cron schedule: %v", field, err)
	}
	return sched, nil
}

// nextRun is the first tick of spec strictly after t, in UTC.
func nextRun(spec string, t time.Time) (time.Time, error) {
	sched, err := parseSchedule("schedule", spec)
	if err != nil {
		return time.Time{}, err
	}
	return sched.Next(t.UTC()).UTC(), nil
}

const cronCols = `tenant, cron_id, assistant_id, thread_id, user_id, principal, schedule, payload, metadata, on_run_completed, end_time, next_run_date, enabled, created_at, updated_at`

func scanCron(row interface{ Scan(...any) error }) (*Cron, error) {
	var c Cron
	var thread, user, onDone sql.NullString
	var princ, payload, md string
	var end, next, created, updated int64
	var enabled int
	if err := row.Scan(&c.tenant, &c.CronID, &c.AssistantID, &thread, &user, &princ, &c.Schedule, &payload, &md, &onDone, &end, &next, &enabled, &created, &updated); err != nil {
		return nil, err
	}
	if thread.Valid {
		c.ThreadID = &thread.String
	}
	if user.Valid {
		c.UserID = &user.String
	}
	if onDone.Valid {
		c.OnRunCompleted = &onDone.String
	}
	if end > 0 {
		t := fromMS(end)
		c.EndTime = &t
	}
	c.nextMS = next
	if next > 0 {
		t := fromMS(next)
		c.NextRunDate = &t
	}
	c.Enabled = enabled != 0
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	_ = json.Unmarshal([]byte(princ), &c.principal)
	if err := json.Unmarshal([]byte(payload), &c.Payload); err != nil || c.Payload == nil {
		c.Payload = map[string]any{}
	}
	if err := json.Unmarshal([]byte(md), &c.Metadata); err != nil || c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	return &c, nil
}

func msOrZero(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return ms(*t)
}

func (m *metaDB) insertCron(ctx context.Context, c *Cron) error {
	_, err := m.exec(ctx, `INSERT INTO trellis_crons (`+cronCols+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		c.tenant, c.CronID, c.AssistantID, nullString(c.ThreadID), nullString(c.UserID), mustJSON(c.principal), c.Schedule,
		mustJSON(c.Payload), mustJSON(c.Metadata), nullString(c.OnRunCompleted), msOrZero(c.EndTime), c.nextMS,
		boolInt(c.Enabled), ms(c.CreatedAt), ms(c.UpdatedAt))
	return err
}

// updateCron writes every field of a cron a PATCH may change.
func (m *metaDB) updateCron(ctx context.Context, c *Cron) error {
	_, err := m.exec(ctx, `UPDATE trellis_crons SET schedule = $1, payload = $2, metadata = $3, on_run_completed = $4,
end_time = $5, next_run_date = $6, enabled = $7, updated_at = $8 WHERE tenant = $9 AND cron_id = $10`,
		c.Schedule, mustJSON(c.Payload), mustJSON(c.Metadata), nullString(c.OnRunCompleted), msOrZero(c.EndTime),
		c.nextMS, boolInt(c.Enabled), ms(c.UpdatedAt), c.tenant, c.CronID)
	return err
}

// getCron returns a tenant's cron; another tenant's (or, for a per-user principal, another
// user's) answers 404.
func (m *metaDB) getCron(ctx context.Context, tenant, id string) (*Cron, error) {
	c, err := scanCron(m.db.QueryRowContext(ctx, m.q(`SELECT `+cronCols+` FROM trellis_crons WHERE tenant = $1 AND cron_id = $2`), tenant, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !cronVisible(ctx, c)) {
		return nil, notFound("cron", id)
	}
	return c, err
}

func cronVisible(ctx context.Context, c *Cron) bool {
	u := scopedUser(ctx)
	return u == "" || (c.UserID != nil && *c.UserID == u)
}

func (m *metaDB) deleteCron(ctx context.Context, tenant, id string) error {
	_, err := m.exec(ctx, `DELETE FROM trellis_crons WHERE tenant = $1 AND cron_id = $2`, tenant, id)
	return err
}

// cronFilter is a cron search (POST /runs/crons/search and /runs/crons/count).
type cronFilter struct {
	assistantID, threadID string
	enabled               *bool
	sortBy                string
	asc                   bool
	limit, offset         int // limit 0: all
}

var cronSortKeys = []string{"cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"}

func (m *metaDB) cronWhere(ctx context.Context, tenant string, f cronFilter) (string, []any) {
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := `tenant = $1`
	if u := scopedUser(ctx); u != "" {
		where += ` AND user_id = ` + arg(u)
	}
	if f.assistantID != "" {
		where += ` AND assistant_id = ` + arg(f.assistantID)
	}
	if f.threadID != "" {
		where += ` AND thread_id = ` + arg(f.threadID)
	}
	if f.enabled != nil {
		where += ` AND enabled = ` + arg(boolInt(*f.enabled))
	}
	return where, args
}

func (m *metaDB) searchCrons(ctx context.Context, tenant string, f cronFilter) ([]*Cron, error) {
	where, args := m.cronWhere(ctx, tenant, f)
	order := "created_at"
	if f.sortBy != "" {
		order = f.sortBy // one of cronSortKeys, checked by the caller
	}
	dir := " DESC"
	if f.asc {
		dir = " ASC"
	}
	query := `SELECT ` + cronCols + ` FROM trellis_crons WHERE ` + where + ` ORDER BY ` + order + dir + `, cron_id` + dir
	if f.limit > 0 {
		query += fmt.Sprintf(` LIMIT %d OFFSET %d`, f.limit, f.offset)
	}
	rows, err := m.db.QueryContext(ctx, m.q(query), args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanCron)
}

func (m *metaDB) countCrons(ctx context.Context, tenant string, f cronFilter) (int, error) {
	where, args := m.cronWhere(ctx, tenant, f)
	var n int
	err := m.db.QueryRowContext(ctx, m.q(`SELECT count(*) FROM trellis_crons WHERE `+where), args...).Scan(&n)
	return n, err
}

// dueCrons returns up to limit enabled crons, of every tenant, whose next run date is at or before
// now and not after their end time.
func (m *metaDB) dueCrons(ctx context.Context, now time.Time, limit int) ([]*Cron, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+cronCols+` FROM trellis_crons
WHERE enabled = 1 AND next_run_date > 0 AND next_run_date <= $1 AND (end_time = 0 OR next_run_date <= end_time)
ORDER BY next_run_date LIMIT $2`), ms(now), limit)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanCron)
}

// claimCron moves a cron's next run date from the one seen (prev) to next; it reports whether
// this call did it. Of several processes claiming the same tick, exactly one succeeds.
func (m *metaDB) claimCron(ctx context.Context, id string, prev, next int64) (bool, error) {
	res, err := m.exec(ctx, `UPDATE trellis_crons SET next_run_date = $1 WHERE cron_id = $2 AND next_run_date = $3 AND enabled = 1`, next, id, prev)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// tickCrons claims the crons that are due and starts their runs; it returns how many it started.
func (s *Server) tickCrons(ctx context.Context) int {
	s.crons.ticking.Lock()
	defer s.crons.ticking.Unlock()
	now := s.cronNow()
	started := 0
	for ctx.Err() == nil {
		due, err := s.meta.dueCrons(ctx, now, 100)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("crons: cannot read due crons", "err", err)
			}
			return started
		}
		claimed := 0
		for _, c := range due {
			var next int64
			if t, err := nextRun(c.Schedule, now); err == nil {
				next = ms(t)
			} else {
				s.log.Warn("crons: bad schedule, cron stopped", "cron_id", c.CronID, "schedule", c.Schedule)
			}
			ok, err := s.meta.claimCron(ctx, c.CronID, c.nextMS, next)
			if err != nil {
				s.log.Warn("crons: cannot claim", "cron_id", c.CronID, "err", err)
				continue
			}
			if !ok {
				continue // another process took this tick
			}
			claimed++
			if err := s.startCronRun(ctx, c); err != nil {
				s.retryCronTick(ctx, c, now, next, err)
				s.dropOrphanCron(ctx, c, err)
				continue
			}
			started++
		}
		if len(due) < 100 || claimed == 0 {
			return started
		}
	}
	return started
}

// cronRetry is how long after a tick whose run could not be created (its thread busy, the
// database down) the tick is tried again.
const cronRetry = 10 * time.Second

// retryCronTick gives back a tick whose run could not be created, due again cronRetry from now,
// unless the error is one a retry cannot mend (a bad payload, an assistant or thread gone) or
// the schedule's next tick comes first: that tick is then the one that runs, and this one is
// logged as skipped.
func (s *Server) retryCronTick(ctx context.Context, c *Cron, now time.Time, next int64, err error) {
	retryAt := ms(now.Add(cronRetry))
	permanent := errors.Is(err, ErrBadRequest) || errors.Is(err, ErrNotFound)
	if permanent || next == 0 || retryAt >= next {
		s.log.Error("crons: the tick's run was not started; the tick is skipped", "cron_id", c.CronID, "err", err, "retried", !permanent)
		return
	}
	if ok, cerr := s.meta.claimCron(ctx, c.CronID, next, retryAt); cerr != nil || !ok {
		s.log.Error("crons: the tick's run was not started, and the tick could not be given back", "cron_id", c.CronID, "err", err, "claim_err", cerr)
		return
	}
	s.log.Warn("crons: the tick's run was not started; retrying", "cron_id", c.CronID, "err", err, "retry_at", fromMS(retryAt))
}

// startCronRun starts one tick's run of a cron, as its creator, through the run API's path.
func (s *Server) startCronRun(ctx context.Context, c *Cron) error {
	var req runCreate
	raw, _ := json.Marshal(c.Payload)
	if err := json.Unmarshal(raw, &req); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	req.AssistantID = c.AssistantID
	threadID := ""
	if c.ThreadID != nil {
		threadID = *c.ThreadID
	} else {
		req.OnCompletion = "delete"
		if c.OnRunCompleted != nil && *c.OnRunCompleted != "" {
			req.OnCompletion = *c.OnRunCompleted
		}
	}
	if req.Metadata == nil {
		req.Metadata = map[string]any{}
	}
	req.Metadata["cron_id"] = c.CronID
	p := c.principal
	if p.Tenant == "" {
		p.Tenant = c.tenant
	}
	ctx = withPrincipal(ctx, p)
	if err := s.checkRunInputFor(ctx, p.Tenant, &req); err != nil {
		return err
	}
	_, _, err := s.runs.create(ctx, p, threadID, &req)
	return err
}

// dropOrphanCron deletes a thread's cron whose thread is gone (deleted, or expired by its ttl),
// which no later tick could run on.
func (s *Server) dropOrphanCron(ctx context.Context, c *Cron, err error) {
	if c.ThreadID == nil || !errors.Is(err, ErrNotFound) {
		return
	}
	if taken, terr := s.meta.threadTaken(ctx, *c.ThreadID); terr != nil || taken {
		return
	}
	if derr := s.meta.deleteCron(ctx, c.tenant, c.CronID); derr == nil {
		s.log.Info("crons: deleted a cron whose thread is gone", "cron_id", c.CronID, "thread_id", *c.ThreadID)
	}
}
