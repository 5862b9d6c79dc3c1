package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Assistants come from two places. Each registered graph is an assistant of its own (server.go),
// the same for every tenant, which cannot be changed or deleted. Clients create more with
// POST /assistants: a registered graph with a configuration (config, context), a name and
// metadata. Those belong to the tenant that created them (another tenant's ID answers 404), are
// stored in the database with every version they had, and a run on one gets its config and
// context merged under the run's own.

// lookupAssistant finds an assistant: a registered one by its assistant_id or graph ID, or a
// created one of the tenant (of any tenant when tenant is empty: the runner holds only a run's
// assistant ID, checked when the run was created). A created assistant comes with its graph
// when its graph_id is still registered.
func (s *Server) lookupAssistant(ctx context.Context, tenant, id string) (*Assistant, error) {
	if a, ok := s.byID[id]; ok {
		return a, nil
	}
	if _, err := uuid.Parse(id); err != nil || s.meta == nil {
		return nil, notFound("assistant", id) // created assistants have UUIDs: no need to look
	}
	a, err := s.meta.getAssistant(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if reg := s.registered(a.GraphID); reg != nil {
		a.graph = reg.graph
	}
	return a, nil
}

// assistantByID is the runner's lookup (see Server.assistant).
func (s *Server) assistantByID(id string) (*Assistant, error) {
	if a, ok := s.byID[id]; ok {
		return a, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := s.lookupAssistant(ctx, "", id)
	if err == nil && a.graph == nil {
		err = graphGone(a)
	}
	return a, err
}

// assistantFor finds an assistant the tenant may use in a run: registered, or its own, with a
// graph this server has.
func (s *Server) assistantFor(ctx context.Context, tenant, id string) (*Assistant, error) {
	a, err := s.lookupAssistant(ctx, tenant, id)
	if err == nil && a.graph == nil {
		err = graphGone(a)
	}
	return a, err
}

func graphGone(a *Assistant) error {
	return &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("assistant %q uses graph %q, which this server does not serve", a.AssistantID, a.GraphID),
		Hint: "patch the assistant's graph_id to one of the registered graphs"}
}

// registered returns the registered assistant of a graph ID, or nil.
func (s *Server) registered(graphID string) *Assistant {
	if a, ok := s.byID[graphID]; ok && a.GraphID == graphID {
		return a
	}
	return nil
}

// isRegistered reports whether id names a registered assistant (by assistant_id or graph ID).
func (s *Server) isRegistered(id string) bool {
	_, ok := s.byID[id]
	return ok
}

func (s *Server) assistantOf(r *http.Request) (*Assistant, error) {
	a, err := s.lookupAssistant(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err == nil && !matches(a.Metadata, authAssistantFilters(r.Context())) {
		return nil, notFound("assistant", r.PathValue("id")) // Config.Authorize's filters
	}
	return a, err
}

func (s *Server) assistantWithGraph(r *http.Request) (*Assistant, error) {
	a, err := s.assistantFor(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err == nil && !matches(a.Metadata, authAssistantFilters(r.Context())) {
		return nil, notFound("assistant", r.PathValue("id")) // Config.Authorize's filters
	}
	return a, err
}

// withAssistantConfig returns a run's config and context with the assistant's merged under
// them: the run's keys win, and config.configurable is merged key by key.
func withAssistantConfig(a *Assistant, config, context map[string]any) (map[string]any, map[string]any) {
	if len(a.Config) > 0 {
		merged := maps.Clone(a.Config)
		maps.Copy(merged, config)
		ac, _ := a.Config["configurable"].(map[string]any)
		rc, _ := config["configurable"].(map[string]any)
		if len(ac) > 0 {
			c := maps.Clone(ac)
			maps.Copy(c, rc)
			merged["configurable"] = c
		}
		config = merged
	}
	if len(a.Context) > 0 {
		merged := maps.Clone(a.Context)
		maps.Copy(merged, context)
		context = merged
	}
	return config, context
}

// assistantFields are the request fields that create and patch share.
type assistantFields struct {
	GraphID     *string        `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Name        *string        `json:"name"`
	Description *string        `json:"description"`
}

// check validates the fields present.
func (s *Server) checkAssistantFields(f *assistantFields) error {
	if f.GraphID != nil && s.registered(*f.GraphID) == nil {
		var ids []string
		for _, a := range s.assistants {
			ids = append(ids, a.GraphID)
		}
		if *f.GraphID == "" {
			return badRequest("the registered graphs are "+strings.Join(ids, ", "), "field \"graph_id\" is required")
		}
		return badRequest("the registered graphs are "+strings.Join(ids, ", "), "field \"graph_id\" names no registered graph: %q", *f.GraphID)
	}
	if c, ok := f.Config["configurable"]; ok && c != nil {
		if _, ok := c.(map[string]any); !ok {
			return badRequest("send configurable as an object of values", "field \"config.configurable\" must be an object")
		}
	}
	if _, err := s.budgetOf(f.Config); err != nil {
		return err
	}
	if f.GraphID != nil && f.Context != nil {
		// An assistant's context may leave required fields to its runs.
		if err := checkContext(s.registered(*f.GraphID).graph, "context", f.Context, true); err != nil { // runcontext.go
			return err
		}
	}
	return nil
}

func (s *Server) handleAssistantCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		assistantFields
		AssistantID string `json:"assistant_id"`
		IfExists    string `json:"if_exists"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.GraphID == nil {
		req.GraphID = new(string)
	}
	if err := s.checkAssistantFields(&req.assistantFields); err != nil {
		writeError(w, err)
		return
	}
	switch req.IfExists {
	case "", "raise", "do_nothing":
	default:
		writeError(w, badRequest("use raise or do_nothing", "field \"if_exists\" is %q", req.IfExists))
		return
	}
	if req.AssistantID == "" {
		req.AssistantID = uuid.NewString()
	} else if _, err := uuid.Parse(req.AssistantID); err != nil {
		writeError(w, badRequest("use a UUID, or leave it out to get one", "field \"assistant_id\" is not a UUID: %q", req.AssistantID))
		return
	}
	p := principal(r)
	now := s.meta.Stamp()
	a := &Assistant{AssistantID: req.AssistantID, GraphID: *req.GraphID, Name: "Untitled", Description: req.Description,
		Config: req.Config, Context: req.Context, Metadata: authStamp(r.Context(), req.Metadata), Version: 1, CreatedAt: now, UpdatedAt: now}
	if req.Name != nil && *req.Name != "" {
		a.Name = *req.Name
	}
	for _, m := range []*map[string]any{&a.Config, &a.Context, &a.Metadata} {
		if *m == nil {
			*m = map[string]any{}
		}
	}
	conflict := &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("assistant %q already exists", a.AssistantID), Hint: "pass if_exists: do_nothing to get the existing assistant"}
	if s.isRegistered(a.AssistantID) {
		writeError(w, conflict)
		return
	}
	created, err := s.meta.createAssistant(r.Context(), p.Tenant, a)
	if err != nil {
		writeError(w, err)
		return
	}
	if !created {
		existing, err := s.lookupAssistant(r.Context(), p.Tenant, a.AssistantID)
		if err != nil || req.IfExists != "do_nothing" {
			if err == nil || errors.Is(err, ErrNotFound) {
				err = conflict
			}
			writeError(w, err)
			return
		}
		writeJSON(w, 200, existing)
		return
	}
	writeJSON(w, 200, a)
}

func (s *Server) handleAssistantGet(w http.ResponseWriter, r *http.Request) {
	a, err := s.assistantOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, a)
}

func fixed(a *Assistant) error {
	return &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("assistant %q is the default assistant of graph %q and cannot be changed or deleted", a.AssistantID, a.GraphID),
		Hint: "create an assistant of your own with POST /assistants"}
}

// handleAssistantPatch changes a created assistant; the result is its new version. Metadata is
// merged into the old; the other fields present replace theirs.
func (s *Server) handleAssistantPatch(w http.ResponseWriter, r *http.Request) {
	var req assistantFields
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkAssistantFields(&req); err != nil {
		writeError(w, err)
		return
	}
	id := r.PathValue("id")
	if reg, ok := s.byID[id]; ok {
		writeError(w, fixed(reg))
		return
	}
	if _, err := uuid.Parse(id); err != nil {
		writeError(w, notFound("assistant", id))
		return
	}
	a, err := s.meta.updateAssistant(r.Context(), principal(r).Tenant, id, func(a *Assistant) error {
		if req.GraphID != nil {
			a.GraphID = *req.GraphID
		}
		if req.Config != nil {
			a.Config = req.Config
		}
		if req.Context != nil {
			a.Context = req.Context
			if reg := s.registered(a.GraphID); reg != nil {
				if err := checkContext(reg.graph, "context", a.Context, true); err != nil {
					return err
				}
			}
		}
		if req.Name != nil && *req.Name != "" {
			a.Name = *req.Name
		}
		if req.Description != nil {
			a.Description = req.Description
		}
		maps.Copy(a.Metadata, req.Metadata)
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, a)
}

// handleAssistantDelete deletes a created assistant with its versions. Its pending and running
// runs are cancelled; with ?delete_threads=true the threads it ran on go too.
func (s *Server) handleAssistantDelete(w http.ResponseWriter, r *http.Request) {
	var deleteThreads bool
	switch v := r.URL.Query().Get("delete_threads"); v {
	case "", "false":
	case "true":
		deleteThreads = true
	default:
		writeError(w, badRequest("use true or false", "query parameter \"delete_threads\" is %q", v))
		return
	}
	a, err := s.assistantOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if s.isRegistered(a.AssistantID) {
		writeError(w, fixed(a))
		return
	}
	p := principal(r)
	ctx := r.Context()
	if ok, err := s.meta.DeleteAssistant(ctx, p.Tenant, a.AssistantID); err != nil || !ok {
		if err == nil {
			err = notFound("assistant", a.AssistantID)
		}
		writeError(w, err)
		return
	}
	runs, err := s.meta.runsOfAssistant(ctx, p.Tenant, a.AssistantID)
	if err != nil {
		writeError(w, err)
		return
	}
	threads := map[string]bool{}
	for _, run := range runs {
		if run.Status == RunPending || run.Status == RunRunning {
			_ = s.runs.cancel(ctx, p.Tenant, run.ThreadID, run.RunID, errCancelInterrupt, true)
		}
		threads[run.ThreadID] = true
	}
	if deleteThreads {
		// The threads its runs used and those created for it; read first, deleted after (the
		// SQLite connection is busy while the rows are read).
		var doomed []*Thread
		ids := slices.Collect(maps.Keys(threads))
		seen := map[string]bool{}
		collect := func(t *Thread) bool {
			if (threads[t.ThreadID] || t.Metadata["assistant_id"] == a.AssistantID) && !seen[t.ThreadID] {
				seen[t.ThreadID] = true
				doomed = append(doomed, t)
			}
			return true
		}
		filters := []threadFilter{{metadata: map[string]any{"assistant_id": a.AssistantID}}}
		if len(ids) > 0 {
			filters = append(filters, threadFilter{ids: ids})
		}
		for _, f := range filters {
			if err := s.meta.eachThread(ctx, p.Tenant, f, collect); err != nil {
				writeError(w, err)
				return
			}
		}
		for _, t := range doomed {
			if err := s.removeThread(ctx, t); err != nil {
				writeError(w, err)
				return
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleAssistantVersions lists an assistant's versions, newest first.
func (s *Server) handleAssistantVersions(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Metadata map[string]any `json:"metadata"`
		Limit    int            `json:"limit"`
		Offset   int            `json:"offset"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	a, err := s.assistantOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var all []*AssistantVersion
	if s.isRegistered(a.AssistantID) {
		all = []*AssistantVersion{{AssistantID: a.AssistantID, GraphID: a.GraphID, Name: a.Name, Description: a.Description,
			Config: a.Config, Context: a.Context, Metadata: a.Metadata, Version: a.Version, CreatedAt: a.CreatedAt}}
	} else if all, err = s.meta.assistantVersions(r.Context(), a.AssistantID); err != nil {
		writeError(w, err)
		return
	}
	out := []*AssistantVersion{}
	for _, v := range all {
		if matches(v.Metadata, req.Metadata) {
			out = append(out, v)
		}
	}
	out = page(out, req.Limit, req.Offset, 10)
	if out == nil {
		out = []*AssistantVersion{}
	}
	writeJSON(w, 200, out)
}

// handleAssistantLatest makes one of a created assistant's versions its current one.
func (s *Server) handleAssistantLatest(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Version *int `json:"version"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Version == nil || *req.Version < 1 {
		writeError(w, badRequest("list the versions with POST /assistants/{id}/versions", "field \"version\" must be a version number (1 or more)"))
		return
	}
	a, err := s.assistantOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if s.isRegistered(a.AssistantID) {
		if *req.Version != a.Version {
			writeError(w, &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("assistant %q has no version %d", a.AssistantID, *req.Version), kind: ErrNotFound})
			return
		}
		writeJSON(w, 200, a)
		return
	}
	a, err = s.meta.setLatestAssistant(r.Context(), principal(r).Tenant, a.AssistantID, *req.Version)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, a)
}

// ---- search and count ----

type assistantQuery struct {
	GraphID   string         `json:"graph_id"`
	Name      string         `json:"name"`
	Metadata  map[string]any `json:"metadata"`
	Limit     int            `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`
	SortOrder string         `json:"sort_order"`
	Select    []string       `json:"select"`
}

var assistantSortKeys = []string{"assistant_id", "graph_id", "name", "created_at", "updated_at"}

var assistantFieldNames = []string{"assistant_id", "graph_id", "name", "description", "config", "context", "created_at", "updated_at", "metadata", "version"}

// findAssistants returns the registered assistants and the tenant's own that match q, sorted
// as it asks (newest first by default).
func (s *Server) findAssistants(ctx context.Context, tenant string, q assistantQuery) ([]*Assistant, error) {
	if q.SortBy != "" && !slices.Contains(assistantSortKeys, q.SortBy) {
		return nil, badRequest("sort by one of "+strings.Join(assistantSortKeys, ", "), "field \"sort_by\" is %q", q.SortBy)
	}
	switch q.SortOrder {
	case "", "asc", "desc":
	default:
		return nil, badRequest("use asc or desc", "field \"sort_order\" is %q", q.SortOrder)
	}
	for _, f := range q.Select {
		if !slices.Contains(assistantFieldNames, f) {
			return nil, badRequest("select among "+strings.Join(assistantFieldNames, ", "), "field \"select\" names unknown field %q", f)
		}
	}
	own, err := s.meta.listAssistants(ctx, tenant)
	if err != nil {
		return nil, err
	}
	var out []*Assistant
	name := strings.ToLower(q.Name)
	for _, a := range append(own, s.assistants...) {
		if q.GraphID != "" && a.GraphID != q.GraphID {
			continue
		}
		if name != "" && !strings.Contains(strings.ToLower(a.Name), name) {
			continue
		}
		if !matches(a.Metadata, q.Metadata) || !matches(a.Metadata, authAssistantFilters(ctx)) {
			continue
		}
		out = append(out, a)
	}
	key := func(a *Assistant) string {
		switch q.SortBy {
		case "assistant_id":
			return a.AssistantID
		case "graph_id":
			return a.GraphID
		case "name":
			return a.Name
		}
		return ""
	}
	slices.SortStableFunc(out, func(a, b *Assistant) int {
		var c int
		switch q.SortBy {
		case "", "created_at":
			c = a.CreatedAt.Compare(b.CreatedAt)
		case "updated_at":
			c = a.UpdatedAt.Compare(b.UpdatedAt)
		default:
			c = cmp.Compare(key(a), key(b))
		}
		if q.SortOrder == "desc" || (q.SortOrder == "" && (q.SortBy == "" || q.SortBy == "created_at" || q.SortBy == "updated_at")) {
			c = -c
		}
		return c
	})
	return out, nil
}

func (s *Server) handleAssistantSearch(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := decode(r, &q); err != nil {
		writeError(w, err)
		return
	}
	all, err := s.findAssistants(r.Context(), principal(r).Tenant, q)
	if err != nil {
		writeError(w, err)
		return
	}
	list := page(all, q.Limit, q.Offset, 10)
	if n := max(q.Offset, 0) + len(list); n < len(all) {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(n))
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(len(all)))
	if len(q.Select) == 0 {
		if list == nil {
			list = []*Assistant{}
		}
		writeJSON(w, 200, list)
		return
	}
	writeJSON(w, 200, selectFields(list, q.Select))
}

// selectFields returns each of list's records as a JSON object holding only the fields named,
// a field the record leaves out (an empty optional one) as null, as a SQL select would.
func selectFields[T any](list []T, fields []string) []map[string]any {
	out := make([]map[string]any, 0, len(list))
	for _, v := range list {
		var all map[string]any
		raw, _ := json.Marshal(v)
		_ = json.Unmarshal(raw, &all)
		m := make(map[string]any, len(fields))
		for _, k := range fields {
			m[k] = all[k]
		}
		out = append(out, m)
	}
	return out
}

func (s *Server) handleAssistantCount(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := decode(r, &q); err != nil {
		writeError(w, err)
		return
	}
	all, err := s.findAssistants(r.Context(), principal(r).Tenant, q)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, len(all))
}
