package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
			ok, err := s.meta.ClaimCron(ctx, c.CronID, c.nextMS, next)
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
	if ok, cerr := s.meta.ClaimCron(ctx, c.CronID, next, retryAt); cerr != nil || !ok {
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
	if taken, terr := s.meta.ThreadTaken(ctx, *c.ThreadID); terr != nil || taken {
		return
	}
	if derr := s.meta.DeleteCron(ctx, c.tenant, c.CronID); derr == nil {
		s.log.Info("crons: deleted a cron whose thread is gone", "cron_id", c.CronID, "thread_id", *c.ThreadID)
	}
}
