package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The /runs/crons routes (crons.go has the records and the scheduler).

// cronOnlyFields are the fields of a cron request that are the cron's own, not its runs'.
var cronOnlyFields = []string{"schedule", "end_time", "enabled", "on_run_completed"}

// cronPayloadFields are the run fields a cron's payload may hold.
var cronPayloadFields = []string{"assistant_id", "input", "command", "config", "context", "metadata", "stream_mode",
	"stream_subgraphs", "interrupt_before", "interrupt_after", "webhook", "multitask_strategy", "if_not_exists",
	"checkpoint_during", "durability", "priority", "feedback_keys"}

// readCronBody reads a cron request into its cron fields and its run payload; an unknown field
// is a 400 naming it.
func readCronBody(r *http.Request) (map[string]json.RawMessage, map[string]any, error) {
	var body map[string]json.RawMessage
	if err := decode(r, &body); err != nil {
		return nil, nil, err
	}
	own := map[string]json.RawMessage{}
	payload := map[string]any{}
	for k, v := range body {
		if string(v) == "null" {
			continue
		}
		switch {
		case slices.Contains(cronOnlyFields, k):
			own[k] = v
		case slices.Contains(cronPayloadFields, k):
			var x any
			if err := json.Unmarshal(v, &x); err != nil {
				return nil, nil, badRequest("send valid JSON", "field %q cannot be read: %v", k, err)
			}
			payload[k] = x
		default:
			return nil, nil, badRequest("the fields are schedule, end_time, enabled, on_run_completed and a run's fields (input, config, context, metadata, ...)", "unknown field %q", k)
		}
	}
	if in, ok := payload["input"]; ok {
		if _, obj := in.(map[string]any); !obj {
			return nil, nil, badRequest(`send the input as a JSON object of state keys, e.g. {"messages": [...]}`, "field \"input\" must be an object")
		}
	}
	if md, ok := payload["metadata"]; ok {
		if _, obj := md.(map[string]any); !obj {
			return nil, nil, badRequest(`send an object, e.g. {"purpose": "digest"}`, "field \"metadata\" must be an object")
		}
	}
	return own, payload, nil
}

// applyCronFields sets a cron's own fields from a request.
func applyCronFields(c *Cron, own map[string]json.RawMessage) error {
	if raw, ok := own["schedule"]; ok {
		if err := json.Unmarshal(raw, &c.Schedule); err != nil {
			return badRequest(`send a string such as "*/5 * * * *"`, "field \"schedule\" must be a string")
		}
		if _, err := parseSchedule("schedule", c.Schedule); err != nil {
			return err
		}
	}
	if raw, ok := own["end_time"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return badRequest(`send an RFC 3339 time, e.g. "2030-01-31T00:00:00Z"`, "field \"end_time\" must be a string")
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return badRequest(`send an RFC 3339 time, e.g. "2030-01-31T00:00:00Z"`, "field \"end_time\" is not a time: %q", s)
		}
		t = t.UTC()
		c.EndTime = &t
	}
	if raw, ok := own["enabled"]; ok {
		if err := json.Unmarshal(raw, &c.Enabled); err != nil {
			return badRequest("send true or false", "field \"enabled\" must be a boolean")
		}
	}
	if raw, ok := own["on_run_completed"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil || (s != "delete" && s != "keep") {
			return badRequest(`send "delete" or "keep"`, "field \"on_run_completed\" is %s", raw)
		}
		c.OnRunCompleted = &s
	}
	return nil
}

// setNextRun computes a cron's next run date from now (none when disabled).
func setNextRun(c *Cron, now time.Time) error {
	if !c.Enabled {
		c.nextMS, c.NextRunDate = 0, nil
		return nil
	}
	t, err := nextRun(c.Schedule, now)
	if err != nil {
		return err
	}
	c.nextMS, c.NextRunDate = ms(t), &t
	return nil
}

func (s *Server) handleCronCreate(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	own, payload, err := readCronBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if _, ok := own["schedule"]; !ok {
		_, err := parseSchedule("schedule", "")
		writeError(w, err)
		return
	}
	aid, _ := payload["assistant_id"].(string)
	if aid == "" {
		writeError(w, badRequest("name one of the assistants from POST /assistants/search", "field \"assistant_id\" is required"))
		return
	}
	a, err := s.assistantFor(r.Context(), p.Tenant, aid)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkCronContext(a, payload); err != nil {
		writeError(w, err)
		return
	}
	now := s.cronNow()
	c := &Cron{CronID: uuid.NewString(), AssistantID: a.AssistantID, Payload: payload, Enabled: true,
		CreatedAt: now, UpdatedAt: now, tenant: p.Tenant, principal: p}
	if p.User != "" {
		u := p.User
		c.UserID = &u
	}
	if md, ok := payload["metadata"].(map[string]any); ok {
		c.Metadata = md
	} else {
		c.Metadata = map[string]any{}
	}
	if tid := r.PathValue("tid"); tid != "" {
		if _, err := s.meta.getThread(r.Context(), p.Tenant, tid); err != nil {
			writeError(w, err)
			return
		}
		if _, ok := own["on_run_completed"]; ok {
			writeError(w, badRequest("leave it out: a thread's cron keeps its thread", "field \"on_run_completed\" applies only to stateless crons (POST /runs/crons)"))
			return
		}
		c.ThreadID = &tid
	}
	if err := applyCronFields(c, own); err != nil {
		writeError(w, err)
		return
	}
	if c.ThreadID == nil && c.OnRunCompleted == nil {
		d := "delete"
		c.OnRunCompleted = &d
	}
	if err := setNextRun(c, now); err != nil {
		writeError(w, err)
		return
	}
	if err := s.meta.insertCron(r.Context(), c); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, c)
}

func (s *Server) handleCronPatch(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	c, err := s.meta.getCron(r.Context(), p.Tenant, r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	own, payload, err := readCronBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if _, ok := payload["assistant_id"]; ok {
		writeError(w, badRequest("create another cron for another assistant", "field \"assistant_id\" cannot be changed"))
		return
	}
	if _, ok := own["on_run_completed"]; ok && c.ThreadID != nil {
		writeError(w, badRequest("leave it out: a thread's cron keeps its thread", "field \"on_run_completed\" applies only to stateless crons"))
		return
	}
	if _, ok := payload["context"]; ok {
		a, err := s.assistantFor(r.Context(), p.Tenant, c.AssistantID)
		if err != nil {
			writeError(w, err)
			return
		}
		if err := s.checkCronContext(a, payload); err != nil {
			writeError(w, err)
			return
		}
	}
	wasEnabled, oldSchedule := c.Enabled, c.Schedule
	if err := applyCronFields(c, own); err != nil {
		writeError(w, err)
		return
	}
	for k, v := range payload {
		c.Payload[k] = v
		if k == "metadata" {
			c.Metadata = v.(map[string]any)
		}
	}
	now := s.cronNow()
	if !c.Enabled || !wasEnabled || c.Schedule != oldSchedule || c.nextMS == 0 {
		if err := setNextRun(c, now); err != nil {
			writeError(w, err)
			return
		}
	}
	c.UpdatedAt = now
	if err := s.meta.updateCron(r.Context(), c); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, c)
}

func (s *Server) handleCronDelete(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	c, err := s.meta.getCron(r.Context(), p.Tenant, r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.meta.DeleteCron(r.Context(), c.tenant, c.CronID); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cronQuery is the body of POST /runs/crons/search and /runs/crons/count.
type cronQuery struct {
	AssistantID string   `json:"assistant_id"`
	ThreadID    string   `json:"thread_id"`
	Enabled     *bool    `json:"enabled"`
	Limit       *int     `json:"limit"`
	Offset      int      `json:"offset"`
	SortBy      string   `json:"sort_by"`
	SortOrder   string   `json:"sort_order"`
	Select      []string `json:"select"`
}

var cronSelectFields = []string{"cron_id", "assistant_id", "thread_id", "end_time", "schedule", "created_at", "updated_at",
	"user_id", "payload", "next_run_date", "metadata", "enabled", "on_run_completed"}

func (q *cronQuery) filter() (cronFilter, error) {
	f := cronFilter{assistantID: q.AssistantID, threadID: q.ThreadID, enabled: q.Enabled, limit: 10, offset: q.Offset}
	if q.Limit != nil {
		if *q.Limit < 1 || *q.Limit > 1000 {
			return f, badRequest("give a limit from 1 to 1000", "field \"limit\" is %d", *q.Limit)
		}
		f.limit = *q.Limit
	}
	if q.Offset < 0 {
		return f, badRequest("give an offset of 0 or more", "field \"offset\" is %d", q.Offset)
	}
	if q.SortBy != "" && !slices.Contains(cronSortKeys, q.SortBy) {
		return f, badRequest("sort by one of "+strings.Join(cronSortKeys, ", "), "field \"sort_by\" is %q", q.SortBy)
	}
	f.sortBy = q.SortBy
	switch q.SortOrder {
	case "", "desc":
	case "asc":
		f.asc = true
	default:
		return f, badRequest("use asc or desc", "field \"sort_order\" is %q", q.SortOrder)
	}
	for _, k := range q.Select {
		if !slices.Contains(cronSelectFields, k) {
			return f, badRequest("select from "+strings.Join(cronSelectFields, ", "), "field \"select\" names unknown field %q", k)
		}
	}
	return f, nil
}

// readCronQuery reads the body of a cron search or count, and its filter.
func readCronQuery(r *http.Request) (cronQuery, cronFilter, error) {
	var q cronQuery
	if err := decode(r, &q); err != nil {
		return q, cronFilter{}, err
	}
	f, err := q.filter()
	return q, f, err
}

func (s *Server) handleCronSearch(w http.ResponseWriter, r *http.Request) {
	q, f, err := readCronQuery(r)
	if err != nil {
		writeError(w, err)
		return
	}
	crons, err := s.meta.searchCrons(r.Context(), principal(r).Tenant, f)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(q.Select) == 0 {
		if crons == nil {
			crons = []*Cron{}
		}
		writeJSON(w, 200, crons)
		return
	}
	writeJSON(w, 200, selectFields(crons, q.Select))
}

func (s *Server) handleCronCount(w http.ResponseWriter, r *http.Request) {
	_, f, err := readCronQuery(r)
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := s.meta.countCrons(r.Context(), principal(r).Tenant, f)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, n)
}
