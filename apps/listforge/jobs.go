package listforge

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
)

// Jobs runs research jobs as background runs of the research assistant through the server's
// run machinery (queue, leases, retries of the queue, recovery after a crash), and records
// each job's progress (current node, steps, status, timestamps) in item_research_runs from the
// run's stream of task events.
type Jobs struct {
	st        *store.Store
	runs      *server.Runs
	assistant string
	log       *slog.Logger
	// ResumeDelay is how long a paused job waits before it resumes; MaxAttempts bounds the
	// runs one job may use.
	ResumeDelay time.Duration
	MaxAttempts int

	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	active map[string]bool
	wg     sync.WaitGroup
	// changed wakes those waiting on a job's record (subscribers of a paused job).
	changed map[string][]chan struct{}
}

func newJobs(st *store.Store, runs *server.Runs, assistant string, log *slog.Logger) *Jobs {
	ctx, cancel := context.WithCancel(context.Background())
	return &Jobs{st: st, runs: runs, assistant: assistant, log: log, ResumeDelay: 2 * time.Second, MaxAttempts: 4,
		ctx: ctx, cancel: cancel, active: map[string]bool{}, changed: map[string][]chan struct{}{}}
}

func (j *Jobs) close() {
	j.cancel()
	j.wg.Wait()
}

func whoOf(p server.Principal) store.Who { return store.Who{Org: p.Tenant, User: p.User} }

// ThreadOf is the server thread a job's graph runs on.
func ThreadOf(jobID string) string { return server.ThreadIDFor(AppName, "research:"+jobID) }

// Start records a job for the item and starts its run.
func (j *Jobs) Start(ctx context.Context, p server.Principal, itemID, typ, priority string) (*store.ResearchRun, error) {
	w := whoOf(p)
	job, err := j.st.CreateRun(ctx, w, store.ResearchRun{ItemID: itemID, Type: typ, Priority: priority})
	if err != nil {
		return nil, err
	}
	thread := ThreadOf(job.ID)
	run, err := j.runs.Start(ctx, p, server.RunRequest{AssistantID: j.assistant, ThreadID: thread,
		Input:      map[string]any{"itemId": itemID, "researchRunId": job.ID, "organizationId": p.Tenant},
		StreamMode: []string{"custom"}, Priority: server.Priority(job.Priority),
		Metadata: map[string]any{"listforge_job": job.ID, "priority": job.Priority, "item_id": itemID}})
	if err != nil {
		_, _ = j.st.UpdateRun(ctx, w, job.ID, func(r *store.ResearchRun) bool {
			r.Status, r.Error = store.RunError, "the research run could not start: "+err.Error()
			now := time.Now().UTC()
			r.CompletedAt = &now
			return true
		})
		return nil, err
	}
	job, err = j.st.UpdateRun(ctx, w, job.ID, func(r *store.ResearchRun) bool {
		r.ThreadID, r.RunID, r.Attempts = thread, run.RunID, 1
		r.Checkpoint = map[string]string{"thread_id": thread, "checkpoint_ns": ""}
		return true
	})
	if err != nil {
		return nil, err
	}
	j.Follow(p, job.ID)
	return job, nil
}

// MsgItemDeleted is a job's error when its item was deleted while it ran or waited.
const MsgItemDeleted = "Item deleted: its research was cancelled"

// Cancelled stops the server run of a job whose item (and so the job's record) was deleted,
// on whichever replica runs it, and wakes those following the job.
func (j *Jobs) Cancelled(ctx context.Context, p server.Principal, ref store.JobRef) {
	if ref.RunID != "" {
		if err := j.runs.Cancel(ctx, p, ref.ThreadID, ref.RunID, false); err != nil {
			j.log.Info("listforge: cancelling the run of a deleted item's job", "job", ref.ID, "run", ref.RunID, "err", err)
		}
	}
	j.notify(ref.ID)
}

// Follow makes sure this process records the job's progress (once per job and process).
func (j *Jobs) Follow(p server.Principal, jobID string) {
	j.mu.Lock()
	if j.active[jobID] || j.ctx.Err() != nil {
		j.mu.Unlock()
		return
	}
	j.active[jobID] = true
	j.wg.Add(1)
	j.mu.Unlock()
	go func() {
		defer j.wg.Done()
		defer func() {
			j.mu.Lock()
			delete(j.active, jobID)
			j.mu.Unlock()
		}()
		if err := j.track(p, jobID); err != nil && j.ctx.Err() == nil && !errors.Is(err, store.ErrNotFound) {
			j.log.Warn("listforge: following a research job failed", "job", jobID, "err", err)
		}
	}()
}

// FollowUnfinished follows every job a previous process left pending or running.
func (j *Jobs) FollowUnfinished(ctx context.Context) error {
	byOrg, err := j.st.UnfinishedRuns(ctx)
	if err != nil {
		return err
	}
	for org, ids := range byOrg {
		for _, id := range ids {
			r, err := j.st.GetRun(ctx, store.Who{Org: org}, id)
			if err != nil {
				continue
			}
			j.Follow(server.Principal{Tenant: org, User: r.CreatedBy}, id)
		}
	}
	return nil
}

// waitChange returns a channel closed at the job's next recorded change.
func (j *Jobs) waitChange(jobID string) <-chan struct{} {
	ch := make(chan struct{})
	j.mu.Lock()
	j.changed[jobID] = append(j.changed[jobID], ch)
	j.mu.Unlock()
	return ch
}

func (j *Jobs) notify(jobID string) {
	j.mu.Lock()
	chs := j.changed[jobID]
	delete(j.changed, jobID)
	j.mu.Unlock()
	for _, ch := range chs {
		close(ch)
	}
}

// parseProgress reads a node's progress event from the custom stream.
func parseProgress(data json.RawMessage) (research.Progress, bool) {
	var p research.Progress
	if json.Unmarshal(data, &p) != nil || p.Kind != research.ProgressKind || p.Node == "" {
		return p, false
	}
	return p, true
}

// track follows the job's runs to the job's end: each run's task events become steps; a
// paused run is resumed in a new run after ResumeDelay.
func (j *Jobs) track(p server.Principal, jobID string) error {
	w := whoOf(p)
	for {
		job, err := j.st.GetRun(j.ctx, w, jobID)
		if err != nil {
			return err
		}
		if job.Done() {
			return nil
		}
		if job.RunID == "" {
			return errors.New("the job has no run")
		}
		if job.Status == store.RunPending && job.Message == research.MsgPaused {
			if err := j.resume(p, job); err != nil {
				return err
			}
			continue
		}
		failure, abort, err := j.record(p, job)
		if err != nil {
			return err
		}
		if j.ctx.Err() != nil {
			return j.ctx.Err()
		}
		if err := j.finish(p, jobID, failure, abort); err != nil {
			return err
		}
	}
}

// record follows one run of the job and records its progress. Events are read on their own
// goroutine and applied in batches (all those waiting, in one transaction), so the record keeps
// up with a fast run without a write per event.
func (j *Jobs) record(p server.Principal, job *store.ResearchRun) (failure, abort string, err error) {
	type item struct {
		ev  server.RunEvent
		err error
	}
	ch := make(chan item, 64)
	ctx, cancel := context.WithCancel(j.ctx)
	defer cancel()
	go func() {
		defer close(ch)
		for ev, err := range j.runs.Follow(ctx, p, job.ThreadID, job.RunID, job.LastSeq) {
			select {
			case ch <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	w := whoOf(p)
	for first := range ch {
		batch := []item{first}
	drain:
		for {
			select {
			case it, ok := <-ch:
				if !ok {
					break drain
				}
				batch = append(batch, it)
			default:
				break drain
			}
		}
		var steps []research.Progress
		var last int64
		for _, it := range batch {
			if it.err != nil {
				return "", "", it.err
			}
			last = it.ev.Seq
			switch it.ev.Event {
			case "custom":
				if pr, ok := parseProgress(it.ev.Data); ok {
					steps = append(steps, pr)
					if pr.Abort != "" {
						abort = pr.Abort
					}
				}
			case "error":
				var e struct {
					Error   string `json:"error"`
					Message string `json:"message"`
				}
				_ = json.Unmarshal(it.ev.Data, &e)
				failure = firstNonEmpty(e.Message, e.Error)
			}
		}
		if len(steps) > 0 {
			j.apply(w, job.ID, job.RunID, last, func(r *store.ResearchRun) { applySteps(r, steps) })
		}
	}
	return failure, abort, nil
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// applySteps records nodes starting and ending in a job's record.
func applySteps(r *store.ResearchRun, steps []research.Progress) {
	now := time.Now().UTC()
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	r.Status = store.RunRunning
	for _, pr := range steps {
		if pr.Phase == "start" {
			r.CurrentNode = pr.Node
			r.StepCount++
			r.StepHistory = append(r.StepHistory, store.Step{Node: pr.Node, StartedAt: now, Status: "running"})
			continue
		}
		for i := len(r.StepHistory) - 1; i >= 0; i-- {
			if s := &r.StepHistory[i]; s.Node == pr.Node && s.Status == "running" {
				s.CompletedAt = &now
				s.Status, s.Error = pr.Status, pr.Error
				break
			}
		}
		if pr.Status == "success" && pr.Thread != "" {
			// The checkpoint written after this step is where a resumed run starts.
			r.Checkpoint = map[string]string{"thread_id": pr.Thread, "checkpoint_ns": "", "step": strconv.Itoa(pr.Step), "after_node": pr.Node}
		}
	}
}

// apply records one event, once: events at or before the record's last sequence are skipped,
// so several followers (replicas) record each event once.
func (j *Jobs) apply(w store.Who, jobID, runID string, seq int64, fn func(r *store.ResearchRun)) {
	_, err := j.st.UpdateRun(j.ctx, w, jobID, func(r *store.ResearchRun) bool {
		if r.RunID != runID || seq <= r.LastSeq || r.Done() {
			return false
		}
		fn(r)
		r.LastSeq = seq
		return true
	})
	if err != nil && j.ctx.Err() == nil && !errors.Is(err, store.ErrNotFound) {
		j.log.Warn("listforge: recording research progress failed", "job", jobID, "err", err)
	}
	j.notify(jobID)
}

// finish records the end of the job's current run: success, an abort (item not ready), a
// failure, or a pause when the failure was an API timeout.
func (j *Jobs) finish(p server.Principal, jobID, failure, abort string) error {
	w := whoOf(p)
	job, err := j.st.GetRun(j.ctx, w, jobID)
	if err != nil || job.Done() {
		return err
	}
	run, err := j.runs.Get(j.ctx, p, job.ThreadID, job.RunID)
	if err != nil {
		return err
	}
	_, err = j.st.UpdateRun(j.ctx, w, jobID, func(r *store.ResearchRun) bool {
		if r.RunID != job.RunID || r.Done() {
			return false
		}
		now := time.Now().UTC()
		markRunning := func(status, msg string) {
			for i := range r.StepHistory {
				if r.StepHistory[i].Status == "running" {
					r.StepHistory[i].Status, r.StepHistory[i].Error = status, msg
					r.StepHistory[i].CompletedAt = &now
				}
			}
		}
		switch {
		case run.Status == server.RunSuccess && abort != "":
			r.Status, r.Error, r.Message = store.RunError, abort, research.MsgNotReady
			r.CompletedAt = &now
		case run.Status == server.RunSuccess:
			r.Status, r.CurrentNode, r.Message = store.RunSuccess, "", ""
			r.CompletedAt = &now
		case strings.Contains(failure, "research paused") && r.Attempts < j.MaxAttempts:
			markRunning("error", failure)
			r.Status, r.Message, r.Error = store.RunPending, research.MsgPaused, failure
		case run.Status == server.RunPending || run.Status == server.RunRunning:
			return false // the stream ended with the server shutting down: follow again later
		default:
			markRunning("error", failure)
			if failure == "" {
				failure = "the research run ended " + run.Status
			}
			r.Status, r.Error = store.RunError, failure
			r.CompletedAt = &now
		}
		return true
	})
	j.notify(jobID)
	if err != nil {
		return err
	}
	if run.Status == server.RunPending || run.Status == server.RunRunning {
		return errors.New("the run's stream ended before the run: the server is stopping")
	}
	return nil
}

// resume starts a paused job again from its last checkpoint, in a new run on its thread.
func (j *Jobs) resume(p server.Principal, job *store.ResearchRun) error {
	select {
	case <-time.After(j.ResumeDelay):
	case <-j.ctx.Done():
		return j.ctx.Err()
	}
	// The item may have been deleted while the job waited: its record is gone with it.
	if _, err := j.st.GetRun(j.ctx, whoOf(p), job.ID); err != nil {
		return err
	}
	run, err := j.runs.Start(j.ctx, p, server.RunRequest{AssistantID: j.assistant, ThreadID: job.ThreadID, Command: &server.RunCommand{},
		StreamMode: []string{"custom"}, Priority: server.Priority(job.Priority),
		Metadata: map[string]any{"listforge_job": job.ID, "priority": job.Priority, "resumed": true}})
	if err != nil {
		return err
	}
	_, err = j.st.UpdateRun(j.ctx, whoOf(p), job.ID, func(r *store.ResearchRun) bool {
		r.RunID, r.LastSeq, r.Attempts, r.Status = run.RunID, 0, r.Attempts+1, store.RunRunning
		r.Message = "Research resumed from its last checkpoint"
		return true
	})
	j.notify(job.ID)
	return err
}
