package server

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/trellis-go/trellis/server/internal/periodic"
)

// Thread TTLs: a thread created or patched with a ttl is deleted, with its runs and checkpoints,
// once it has gone that long without an update (a run, an update-state, a patch). Every process
// looks for such threads every Config.ThreadTTLSweep; a thread with a run under way is left for
// a later sweep.

// maxTTLMinutes bounds a thread's ttl: ten years.
const maxTTLMinutes = 10 * 366 * 24 * 60

// parseTTL reads a ttl field: minutes as a number, or {"ttl": minutes, "strategy": "delete"}. It
// returns the ttl in milliseconds; 0 when the field is absent.
func parseTTL(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var minutes float64
	if err := json.Unmarshal(raw, &minutes); err != nil {
		var obj struct {
			TTL      *float64 `json:"ttl"`
			Strategy string   `json:"strategy"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil || obj.TTL == nil {
			return 0, badRequest(`give minutes, or {"ttl": minutes, "strategy": "delete"}`, "field \"ttl\" is %s", raw)
		}
		if obj.Strategy != "" && obj.Strategy != "delete" {
			return 0, badRequest(`use the strategy "delete" (the only one)`, "field \"ttl.strategy\" is %q", obj.Strategy)
		}
		minutes = *obj.TTL
	}
	if math.IsNaN(minutes) || minutes <= 0 || minutes > maxTTLMinutes {
		return 0, badRequest("give a number of minutes above 0", "field \"ttl\" is %v", minutes)
	}
	return max(1, int64(minutes*60000)), nil
}

// startTTLSweeper looks for expired threads every Config.ThreadTTLSweep until it is stopped.
func (s *Server) startTTLSweeper() (stop func()) {
	return periodic.Every(s.cfg.ThreadTTLSweep, s.sweepExpiredThreads)
}

// sweepExpiredThreads deletes the threads whose ttl has passed, a hundred at a time.
func (s *Server) sweepExpiredThreads(ctx context.Context) {
	for ctx.Err() == nil {
		threads, err := s.meta.expiredThreads(ctx, time.Now(), 100)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot look for threads past their ttl", "err", err)
			}
			return
		}
		for _, t := range threads {
			if err := s.removeThread(ctx, t); err != nil {
				s.log.Warn("cannot delete a thread past its ttl", "thread_id", t.ThreadID, "err", err)
				return
			}
			s.log.Info("deleted a thread past its ttl", "thread_id", t.ThreadID, "tenant", t.tenant)
		}
		if len(threads) < 100 {
			return
		}
	}
}
