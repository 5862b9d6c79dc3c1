package server

import (
	"context"
	"errors"
	"net/http"
)

// DeleteThread deletes a thread of the principal's tenant as DELETE /threads/{thread_id} does:
// its active runs are cancelled, then its checkpoints, record, runs and events are removed, so
// the thread is gone from GET /threads/{thread_id} and POST /threads/search. A thread that does
// not exist (or is another tenant's) is not an error: an app deleting its session's thread may
// find none when the session never ran.
func (rs *Runs) DeleteThread(ctx context.Context, p Principal, threadID string) error {
	if err := checkIDs(threadID); err != nil {
		return err
	}
	s := rs.s
	ctx = withPrincipal(ctx, p)
	t, err := s.meta.getThread(ctx, p.Tenant, threadID)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return nil
		}
		return err
	}
	active, _ := s.meta.activeRuns(ctx, t.tenant, t.ThreadID)
	for _, run := range active {
		_ = s.runs.cancel(ctx, t.tenant, t.ThreadID, run.RunID, errCancelInterrupt, true)
	}
	return s.removeThread(ctx, t)
}
