package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/trellis-go/trellis/server/internal/engine"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// metaStore is the server's metadata database (server/internal/metadb) seen through the API's
// types. metadb's methods that take and return plain values are used as they are (promoted:
// s.meta.SetRunStatus, s.meta.Stamp, ...); the lowercase methods below stand in for those that
// read or write records: they convert between metadb's rows and the API's types (Thread, Run,
// Cron, ...), turn metadb.ErrNotFound into the API's 404, and narrow what a per-user principal
// sees (owner.go). Call those rather than their metadb counterparts.
type metaStore struct {
	*metadb.DB
	// hidden holds the IDs of finished stateless runs' threads waiting for the engine's
	// sweeper: their thread and runs answer 404 although their rows are still there.
	hidden sync.Map
}

// missing turns metadb.ErrNotFound into the API's 404 for the record what of that id.
func missing(err error, what, id string) error {
	if errors.Is(err, metadb.ErrNotFound) {
		return notFound(what, id)
	}
	return err
}

// convertAll converts rows read by metadb, keeping a nil list nil and an empty one empty.
func convertAll[R, T any](conv func(R) T, rows []R, err error) ([]T, error) {
	if err != nil || rows == nil {
		return nil, err
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = conv(r)
	}
	return out, nil
}

// rawJSON is v as JSON; null when it cannot be marshalled.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// ---- threads ----

func threadFromRow(r *metadb.Thread) *Thread {
	return &Thread{ThreadID: r.ThreadID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, StateUpdatedAt: r.StateUpdatedAt,
		Metadata: r.Metadata, Status: r.Status, Values: orEmptyObject(r.Values), Interrupts: orEmptyObject(r.Interrupts),
		Config: map[string]any{"configurable": map[string]any{"thread_id": r.ThreadID}}, tenant: r.Tenant, temporary: r.Temporary}
}

// orEmptyObject is raw, or {} when it is absent or null (as LangGraph answers a thread with no
// state yet).
func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

// createThread inserts t, owned by ctx's per-user principal (if any), stamped now unless its
// CreatedAt is set. It reports false when the ID is taken.
func (m *metaStore) createThread(ctx context.Context, t *Thread) (bool, error) {
	return m.CreateThread(ctx, m.threadRow(ctx, t))
}

// threadRow is the row of a new thread t, owned by ctx's per-user principal (if any), stamped
// now unless its CreatedAt is set.
func (m *metaStore) threadRow(ctx context.Context, t *Thread) *metadb.Thread {
	t.Metadata = stampOwner(ctx, t.Metadata)
	if t.CreatedAt.IsZero() {
		t.CreatedAt = m.Stamp()
	}
	return &metadb.Thread{Tenant: t.tenant, ThreadID: t.ThreadID, Metadata: t.Metadata, Status: t.Status,
		Temporary: t.temporary, TTLMS: t.ttlMS, CreatedAt: t.CreatedAt}
}

// getThread reads a thread of the tenant that ctx's principal may see.
func (m *metaStore) getThread(ctx context.Context, tenant, id string) (*Thread, error) {
	if _, gone := m.hidden.Load(id); gone {
		return nil, notFound("thread", id)
	}
	r, err := m.GetThread(ctx, tenant, id)
	if err != nil {
		return nil, missing(err, "thread", id)
	}
	t := threadFromRow(r)
	if !ownerSees(ctx, t.Metadata) {
		return nil, notFound("thread", id)
	}
	return t, nil
}

// threadFilter is a thread search (POST /threads/search and /threads/count).
type threadFilter struct {
	status           string
	ids              []string
	metadata, values map[string]any
	sortBy           string // one of threadSortKeys; "" is created_at
	asc              bool
}

var threadSortKeys = metadb.ThreadSortKeys

// eachThread calls fn with a tenant's threads that ctx's principal may see, in the filter's
// order, until fn returns false. fn must still check the filter on each thread (see
// metadb.DB.EachThread).
func (m *metaStore) eachThread(ctx context.Context, tenant string, f threadFilter, fn func(*Thread) bool) error {
	md := f.metadata
	if af := authThreadFilters(ctx); len(af) > 0 {
		md = maps.Clone(md)
		if md == nil {
			md = map[string]any{}
		}
		maps.Copy(md, af)
	}
	if u := scopedUser(ctx); u != "" {
		md = maps.Clone(md)
		if md == nil {
			md = map[string]any{}
		}
		md[OwnerKey] = u
	}
	return m.EachThread(ctx, tenant, metadb.ThreadFilter{Status: f.status, IDs: f.ids, Metadata: md, Values: f.values, SortBy: f.sortBy, Asc: f.asc},
		func(r *metadb.Thread) bool { return fn(threadFromRow(r)) })
}

// expiredThreads returns up to limit threads whose ttl has passed (see metadb.DB.ExpiredThreads).
func (m *metaStore) expiredThreads(ctx context.Context, now time.Time, limit int) ([]*Thread, error) {
	return threadsFrom(m.ExpiredThreads(ctx, now, limit))
}

func threadsFrom(rows []*metadb.Thread, err error) ([]*Thread, error) {
	return convertAll(threadFromRow, rows, err)
}

// setThreadMetadata replaces a thread's metadata; a per-user principal cannot give its thread
// away (its owner key stays its user).
func (m *metaStore) setThreadMetadata(ctx context.Context, tenant, id string, md map[string]any) error {
	return m.SetThreadMetadata(ctx, tenant, id, stampOwner(ctx, md))
}

// threadKey names a tenant's thread.
type threadKey struct{ tenant, id string }

// deleteThreads deletes threads with their runs, events and checkpoints (see
// metadb.DB.DeleteThreads).
func (m *metaStore) deleteThreads(ctx context.Context, keys []threadKey) error {
	rows := make([]metadb.ThreadKey, len(keys))
	for i, k := range keys {
		rows[i] = metadb.ThreadKey{Tenant: k.tenant, ID: k.id}
	}
	return m.DeleteThreads(ctx, rows)
}

// ---- runs ----

func runFromRow(r *metadb.Run) *Run {
	run := &Run{RunID: r.RunID, ThreadID: r.ThreadID, AssistantID: r.AssistantID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Status: r.Status, Metadata: r.Metadata, Kwargs: &RunKwargs{}, MultitaskStrategy: r.MultitaskStrategy, Attempt: r.Attempt,
		LastError: r.LastError, tenant: r.Tenant}
	_ = json.Unmarshal(r.Kwargs, run.Kwargs)
	run.Priority = runPriority(run)
	if len(r.Progress) > 0 {
		var p RunProgress
		if json.Unmarshal(r.Progress, &p) == nil {
			run.Progress = &p
		}
	}
	if !r.NextAttemptAt.IsZero() {
		t := r.NextAttemptAt
		run.NextAttemptAt = &t
	}
	return run
}

func runsFrom(rows []*metadb.Run, err error) ([]*Run, error) {
	return convertAll(runFromRow, rows, err)
}

// runRow is a new run's row.
func runRow(run *Run) *metadb.Run {
	return &metadb.Run{Tenant: run.tenant, RunID: run.RunID, ThreadID: run.ThreadID, AssistantID: run.AssistantID, Status: run.Status,
		Metadata: run.Metadata, Kwargs: rawJSON(run.Kwargs), MultitaskStrategy: run.MultitaskStrategy, CreatedAt: run.CreatedAt, UpdatedAt: run.UpdatedAt}
}

// getRun reads a run of the tenant (and thread, when threadID is set) that ctx's principal may
// see.
func (m *metaStore) getRun(ctx context.Context, tenant, threadID, runID string) (*Run, error) {
	_, run, err := m.visibleRun(ctx, tenant, threadID, runID)
	return run, err
}

// visibleRun is getRun's run, with its row.
func (m *metaStore) visibleRun(ctx context.Context, tenant, threadID, runID string) (*metadb.Run, *Run, error) {
	r, err := m.GetRun(ctx, tenant, threadID, runID)
	if err != nil {
		return nil, nil, missing(err, "run", runID)
	}
	run := runFromRow(r)
	if _, gone := m.hidden.Load(run.ThreadID); gone || !ownerSeesRun(ctx, run) {
		return nil, nil, notFound("run", runID)
	}
	return r, run, nil
}

// runByID reads a run of any tenant (for the executor, which is handed only an ID).
func (m *metaStore) runByID(ctx context.Context, runID string) (*Run, error) {
	r, err := m.RunByID(ctx, runID)
	if err != nil {
		return nil, missing(err, "run", runID)
	}
	return runFromRow(r), nil
}

func (m *metaStore) listRuns(ctx context.Context, tenant, threadID, status string, limit, offset int) ([]*Run, error) {
	return runsFrom(m.ListRuns(ctx, tenant, threadID, status, limit, offset))
}

// activeRuns lists a thread's pending and running runs, oldest first.
func (m *metaStore) activeRuns(ctx context.Context, tenant, threadID string) ([]*Run, error) {
	return runsFrom(m.ActiveRuns(ctx, tenant, threadID))
}

// tenantActiveRuns lists a tenant's pending and running runs (of one thread, when threadID is
// set), oldest first; stateless runs' included.
func (m *metaStore) tenantActiveRuns(ctx context.Context, tenant, threadID string) ([]*Run, error) {
	return runsFrom(m.TenantActiveRuns(ctx, tenant, threadID))
}

// runsOfAssistant lists a tenant's runs on an assistant.
func (m *metaStore) runsOfAssistant(ctx context.Context, tenant, id string) ([]*Run, error) {
	return runsFrom(m.RunsOfAssistant(ctx, tenant, id))
}

// ---- events ----

// streamEvent is the server's name of a run's stream event (stream.Event), which the metadata
// database reads and writes.
type streamEvent = stream.Event

// loadEvents reads a run's events numbered after after, in order.
func (m *metaStore) loadEvents(ctx context.Context, runID string, after int64) ([]streamEvent, error) {
	return engine.Events{DB: m.DB}.Events(ctx, runID, after)
}

// ---- assistants created through the API ----

func assistantFromRow(r *metadb.Assistant) *Assistant {
	return &Assistant{AssistantID: r.AssistantID, GraphID: r.GraphID, Name: r.Name, Description: r.Description,
		Config: r.Config, Context: r.Context, Metadata: r.Metadata, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func assistantRow(a *Assistant) *metadb.Assistant {
	return &metadb.Assistant{AssistantID: a.AssistantID, GraphID: a.GraphID, Name: a.Name, Description: a.Description,
		Config: a.Config, Context: a.Context, Metadata: a.Metadata, Version: a.Version, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// createAssistant inserts a as the tenant's, with its first version; false when the ID is
// taken.
func (m *metaStore) createAssistant(ctx context.Context, tenant string, a *Assistant) (bool, error) {
	return m.CreateAssistant(ctx, tenant, assistantRow(a))
}

// getAssistant reads a created assistant of the tenant (of any tenant when tenant is empty).
func (m *metaStore) getAssistant(ctx context.Context, tenant, id string) (*Assistant, error) {
	r, err := m.GetAssistant(ctx, tenant, id)
	if err != nil {
		return nil, missing(err, "assistant", id)
	}
	return assistantFromRow(r), nil
}

// listAssistants lists a tenant's created assistants, newest first.
func (m *metaStore) listAssistants(ctx context.Context, tenant string) ([]*Assistant, error) {
	rows, err := m.ListAssistants(ctx, tenant)
	return convertAll(assistantFromRow, rows, err)
}

// updateAssistant lets change rewrite the tenant's assistant (its error aborts) and stores the
// result as the assistant's new current version.
func (m *metaStore) updateAssistant(ctx context.Context, tenant, id string, change func(*Assistant) error) (*Assistant, error) {
	r, err := m.UpdateAssistant(ctx, tenant, id, func(r *metadb.Assistant) error {
		a := assistantFromRow(r)
		if err := change(a); err != nil {
			return err
		}
		*r = *assistantRow(a)
		return nil
	})
	if err != nil {
		return nil, missing(err, "assistant", id)
	}
	return assistantFromRow(r), nil
}

// setLatestAssistant makes one of the assistant's versions its current one again.
func (m *metaStore) setLatestAssistant(ctx context.Context, tenant, id string, version int) (*Assistant, error) {
	r, err := m.SetLatestAssistant(ctx, tenant, id, version)
	if errors.Is(err, metadb.ErrNoVersion) {
		return nil, &APIError{Status: 404, Message: fmt.Sprintf("assistant %q has no version %d", id, version), Hint: "list its versions with POST /assistants/{id}/versions", kind: ErrNotFound}
	}
	if err != nil {
		return nil, missing(err, "assistant", id)
	}
	return assistantFromRow(r), nil
}

// assistantVersions lists a created assistant's versions, newest first.
func (m *metaStore) assistantVersions(ctx context.Context, id string) ([]*AssistantVersion, error) {
	rows, err := m.AssistantVersions(ctx, id)
	return convertAll(func(v *metadb.Assistant) *AssistantVersion {
		return &AssistantVersion{AssistantID: v.AssistantID, GraphID: v.GraphID, Name: v.Name, Description: v.Description,
			Config: v.Config, Context: v.Context, Metadata: v.Metadata, Version: v.Version, CreatedAt: v.CreatedAt}
	}, rows, err)
}

// ---- crons ----

func cronFromRow(r *metadb.Cron) *Cron {
	c := &Cron{CronID: r.CronID, AssistantID: r.AssistantID, ThreadID: r.ThreadID, OnRunCompleted: r.OnRunCompleted, Schedule: r.Schedule,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Payload: r.Payload, UserID: r.UserID, Metadata: r.Metadata, Enabled: r.Enabled,
		tenant: r.Tenant}
	if !r.EndTime.IsZero() {
		t := r.EndTime
		c.EndTime = &t
	}
	if !r.NextRunDate.IsZero() {
		t := r.NextRunDate
		c.NextRunDate, c.nextMS = &t, ms(t)
	}
	_ = json.Unmarshal(r.Principal, &c.principal)
	return c
}

func cronsFrom(rows []*metadb.Cron, err error) ([]*Cron, error) {
	return convertAll(cronFromRow, rows, err)
}

func cronRow(c *Cron) *metadb.Cron {
	r := &metadb.Cron{Tenant: c.tenant, CronID: c.CronID, AssistantID: c.AssistantID, ThreadID: c.ThreadID, UserID: c.UserID,
		OnRunCompleted: c.OnRunCompleted, Principal: rawJSON(c.principal), Schedule: c.Schedule, Payload: c.Payload, Metadata: c.Metadata,
		Enabled: c.Enabled, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.EndTime != nil {
		r.EndTime = *c.EndTime
	}
	if c.nextMS > 0 {
		r.NextRunDate = fromMS(c.nextMS)
	}
	return r
}

func (m *metaStore) insertCron(ctx context.Context, c *Cron) error {
	return m.InsertCron(ctx, cronRow(c))
}

// updateCron writes every field of a cron a PATCH may change.
func (m *metaStore) updateCron(ctx context.Context, c *Cron) error {
	return m.UpdateCron(ctx, cronRow(c))
}

// getCron returns a tenant's cron; another tenant's (or, for a per-user principal, another
// user's) answers 404.
func (m *metaStore) getCron(ctx context.Context, tenant, id string) (*Cron, error) {
	r, err := m.GetCron(ctx, tenant, id)
	if err != nil {
		return nil, missing(err, "cron", id)
	}
	c := cronFromRow(r)
	if u := scopedUser(ctx); u != "" && (c.UserID == nil || *c.UserID != u) {
		return nil, notFound("cron", id)
	}
	return c, nil
}

// cronFilter is a cron search (POST /runs/crons/search and /runs/crons/count).
type cronFilter struct {
	assistantID, threadID string
	enabled               *bool
	sortBy                string
	asc                   bool
	limit, offset         int // limit 0: all
}

var cronSortKeys = metadb.CronSortKeys

// rows is the search f of ctx's principal: a per-user one sees its user's crons only.
func (f cronFilter) rows(ctx context.Context) metadb.CronFilter {
	return metadb.CronFilter{UserID: scopedUser(ctx), AssistantID: f.assistantID, ThreadID: f.threadID, Enabled: f.enabled,
		SortBy: f.sortBy, Asc: f.asc, Limit: f.limit, Offset: f.offset}
}

func (m *metaStore) searchCrons(ctx context.Context, tenant string, f cronFilter) ([]*Cron, error) {
	return cronsFrom(m.SearchCrons(ctx, tenant, f.rows(ctx)))
}

func (m *metaStore) countCrons(ctx context.Context, tenant string, f cronFilter) (int, error) {
	return m.CountCrons(ctx, tenant, f.rows(ctx))
}

// dueCrons returns up to limit enabled crons, of every tenant, that are due at now.
func (m *metaStore) dueCrons(ctx context.Context, now time.Time, limit int) ([]*Cron, error) {
	return cronsFrom(m.DueCrons(ctx, now, limit))
}
