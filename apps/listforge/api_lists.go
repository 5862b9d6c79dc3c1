package listforge

import (
	"net/http"
	"strconv"

	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
)

// Lists the web page needs to come back to an item: the caller's chat sessions and the item's
// research jobs.

// listSessions answers GET /items/{itemId}/chat/sessions: {items} of the caller's sessions
// about the item, the most recently used first.
func (a *app) listSessions(w http.ResponseWriter, r *http.Request, p server.Principal) {
	out, err := a.st.ListSessions(r.Context(), whoOf(p), r.PathValue("itemId"))
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"items": out})
}

// listJobs answers GET /items/{itemId}/research/jobs?limit=: {items} of the item's research
// jobs, newest first (20 unless limit says otherwise, at most 100). A job not finished is
// followed, as GET .../jobs/{jobId} does.
func (a *app) listJobs(w http.ResponseWriter, r *http.Request, p server.Principal) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			fail(w, &store.FieldError{Field: "limit", Hint: "a number of jobs from 1 to 100"})
			return
		}
		limit = n
	}
	out, err := a.st.ListRuns(r.Context(), whoOf(p), r.PathValue("itemId"), limit)
	if err != nil {
		fail(w, err)
		return
	}
	for _, j := range out {
		if !j.Done() {
			a.jobs.Follow(p, j.ID)
		}
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"items": out})
}
