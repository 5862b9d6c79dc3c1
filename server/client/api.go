package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// Assistant is an assistant: a graph with a configuration of its own.
type Assistant struct {
	AssistantID string          `json:"assistant_id"`
	GraphID     string          `json:"graph_id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Config      json.RawMessage `json:"config,omitempty"`
	Context     json.RawMessage `json:"context,omitempty"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
	Version     int             `json:"version"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// AssistantRequest creates or changes an assistant (POST /assistants, PATCH /assistants/{id}).
type AssistantRequest struct {
	AssistantID string         `json:"assistant_id,omitempty"`
	GraphID     string         `json:"graph_id,omitempty"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
	Context     map[string]any `json:"context,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// IfExists is "raise" (the default: 409) or "do_nothing" (the existing one is returned).
	IfExists string `json:"if_exists,omitempty"`
}

// Search narrows a search of assistants, threads, runs or crons; zero fields are not sent.
type Search struct {
	Metadata  map[string]any `json:"metadata,omitempty"`
	GraphID   string         `json:"graph_id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Status    string         `json:"status,omitempty"`
	Values    map[string]any `json:"values,omitempty"`
	Limit     int            `json:"limit,omitempty"`
	Offset    int            `json:"offset,omitempty"`
	SortBy    string         `json:"sort_by,omitempty"`
	SortOrder string         `json:"sort_order,omitempty"`
}

// Assistants is the assistants part of the API.
type Assistants struct{ t *transport }

// Get returns an assistant by ID (a registered graph's ID works too).
func (a *Assistants) Get(ctx context.Context, id string) (*Assistant, error) {
	var out Assistant
	return &out, a.t.call(ctx, http.MethodGet, "/assistants/"+esc(id), nil, &out)
}

// Create makes an assistant for a graph.
func (a *Assistants) Create(ctx context.Context, req *AssistantRequest) (*Assistant, error) {
	var out Assistant
	return &out, a.t.call(ctx, http.MethodPost, "/assistants", req, &out)
}

// Update makes a new version of the assistant with the fields given.
func (a *Assistants) Update(ctx context.Context, id string, req *AssistantRequest) (*Assistant, error) {
	var out Assistant
	return &out, a.t.call(ctx, http.MethodPatch, "/assistants/"+esc(id), req, &out)
}

// Delete deletes an assistant and its versions.
func (a *Assistants) Delete(ctx context.Context, id string) error {
	return a.t.call(ctx, http.MethodDelete, "/assistants/"+esc(id), nil, nil)
}

// Search lists assistants, newest first unless s says otherwise; s may be nil.
func (a *Assistants) Search(ctx context.Context, s *Search) ([]Assistant, error) {
	var out []Assistant
	return out, a.t.call(ctx, http.MethodPost, "/assistants/search", orEmpty(s), &out)
}

// Versions lists an assistant's versions, newest first.
func (a *Assistants) Versions(ctx context.Context, id string) ([]Assistant, error) {
	var out []Assistant
	return out, a.t.call(ctx, http.MethodPost, "/assistants/"+esc(id)+"/versions", struct{}{}, &out)
}

// SetLatest makes an earlier version the current one.
func (a *Assistants) SetLatest(ctx context.Context, id string, version int) (*Assistant, error) {
	var out Assistant
	return &out, a.t.call(ctx, http.MethodPost, "/assistants/"+esc(id)+"/latest", map[string]int{"version": version}, &out)
}

// Graph returns the assistant's graph as JSON (nodes and edges), xray including subgraphs.
func (a *Assistants) Graph(ctx context.Context, id string, xray bool) (json.RawMessage, error) {
	path := "/assistants/" + esc(id) + "/graph"
	if xray {
		path += "?xray=true"
	}
	var out json.RawMessage
	return out, a.t.call(ctx, http.MethodGet, path, nil, &out)
}

// Schemas returns the assistant's input, output, state, config and context schemas.
func (a *Assistants) Schemas(ctx context.Context, id string) (json.RawMessage, error) {
	var out json.RawMessage
	return out, a.t.call(ctx, http.MethodGet, "/assistants/"+esc(id)+"/schemas", nil, &out)
}

// Thread is a conversation's record.
type Thread struct {
	ThreadID   string                     `json:"thread_id"`
	Status     string                     `json:"status"`
	Metadata   map[string]any             `json:"metadata,omitempty"`
	Values     json.RawMessage            `json:"values,omitempty"`
	Interrupts map[string]json.RawMessage `json:"interrupts,omitempty"`
	CreatedAt  time.Time                  `json:"created_at"`
	UpdatedAt  time.Time                  `json:"updated_at"`
}

// ThreadRequest creates a thread; every field is optional.
type ThreadRequest struct {
	ThreadID string         `json:"thread_id,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// IfExists is "raise" (the default: 409) or "do_nothing".
	IfExists string `json:"if_exists,omitempty"`
}

// Interrupt is one pending interrupt of a paused thread.
type Interrupt struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
}

// ThreadState is a thread's state at one checkpoint.
type ThreadState struct {
	Values           json.RawMessage `json:"values"`
	Next             []string        `json:"next"`
	Tasks            []Task          `json:"tasks"`
	Checkpoint       Checkpoint      `json:"checkpoint"`
	ParentCheckpoint *Checkpoint     `json:"parent_checkpoint,omitempty"`
	Metadata         map[string]any  `json:"metadata,omitempty"`
	CreatedAt        string          `json:"created_at,omitempty"`
	Interrupts       []Interrupt     `json:"interrupts,omitempty"`
}

// Task is a task of the next step of a thread's state.
type Task struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Error      string          `json:"error,omitempty"`
	Interrupts []Interrupt     `json:"interrupts,omitempty"`
	State      json.RawMessage `json:"state,omitempty"`
}

// Checkpoint locates a checkpoint of a thread.
type Checkpoint struct {
	ThreadID     string `json:"thread_id"`
	CheckpointNS string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
}

// Pending is every interrupt the state waits on, from the state or from its tasks.
func (s *ThreadState) Pending() []Interrupt {
	out := append([]Interrupt(nil), s.Interrupts...)
	if len(out) == 0 {
		for _, t := range s.Tasks {
			out = append(out, t.Interrupts...)
		}
	}
	return out
}

// Threads is the threads part of the API.
type Threads struct{ t *transport }

// Create makes a thread; req may be nil.
func (th *Threads) Create(ctx context.Context, req *ThreadRequest) (*Thread, error) {
	var out Thread
	var body any = struct{}{}
	if req != nil {
		body = req
	}
	return &out, th.t.call(ctx, http.MethodPost, "/threads", body, &out)
}

// Get returns a thread's record.
func (th *Threads) Get(ctx context.Context, id string) (*Thread, error) {
	var out Thread
	return &out, th.t.call(ctx, http.MethodGet, "/threads/"+esc(id), nil, &out)
}

// Update merges metadata into the thread's.
func (th *Threads) Update(ctx context.Context, id string, metadata map[string]any) (*Thread, error) {
	var out Thread
	return &out, th.t.call(ctx, http.MethodPatch, "/threads/"+esc(id), map[string]any{"metadata": metadata}, &out)
}

// Delete deletes a thread with its runs and checkpoints.
func (th *Threads) Delete(ctx context.Context, id string) error {
	return th.t.call(ctx, http.MethodDelete, "/threads/"+esc(id), nil, nil)
}

// Search lists threads; s may be nil.
func (th *Threads) Search(ctx context.Context, s *Search) ([]Thread, error) {
	var out []Thread
	return out, th.t.call(ctx, http.MethodPost, "/threads/search", orEmpty(s), &out)
}

// Copy makes a new thread with the thread's metadata and whole history.
func (th *Threads) Copy(ctx context.Context, id string) (*Thread, error) {
	var out Thread
	return &out, th.t.call(ctx, http.MethodPost, "/threads/"+esc(id)+"/copy", struct{}{}, &out)
}

// State returns the thread's newest state, or its state at checkpointID when that is not empty.
func (th *Threads) State(ctx context.Context, id, checkpointID string) (*ThreadState, error) {
	path := "/threads/" + esc(id) + "/state"
	if checkpointID != "" {
		path += "/" + esc(checkpointID)
	}
	var out ThreadState
	return &out, th.t.call(ctx, http.MethodGet, path, nil, &out)
}

// StateUpdate changes a thread's state as if a node had written values.
type StateUpdate struct {
	Values       any    `json:"values"`
	AsNode       string `json:"as_node,omitempty"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// UpdateState writes values to the thread's state and returns the new checkpoint.
func (th *Threads) UpdateState(ctx context.Context, id string, u *StateUpdate) (*Checkpoint, error) {
	var out struct {
		Checkpoint Checkpoint `json:"checkpoint"`
	}
	if err := th.t.call(ctx, http.MethodPost, "/threads/"+esc(id)+"/state", u, &out); err != nil {
		return nil, err
	}
	return &out.Checkpoint, nil
}

// History lists the thread's states, newest first; limit 0 means the server's default.
func (th *Threads) History(ctx context.Context, id string, limit int) ([]ThreadState, error) {
	body := map[string]any{}
	if limit > 0 {
		body["limit"] = limit
	}
	var out []ThreadState
	return out, th.t.call(ctx, http.MethodPost, "/threads/"+esc(id)+"/history", body, &out)
}

// JoinStream follows the thread's active run, as Runs.Stream would have streamed it; the stream
// is empty when no run is active.
func (th *Threads) JoinStream(ctx context.Context, id string, modes ...string) iter.Seq2[StreamPart, error] {
	path := "/threads/" + esc(id) + "/stream"
	if len(modes) > 0 {
		q := url.Values{}
		for _, m := range modes {
			q.Add("stream_mode", m)
		}
		path += "?" + q.Encode()
	}
	return th.t.stream(ctx, http.MethodGet, path, nil)
}

func orEmpty(s *Search) any {
	if s == nil {
		return struct{}{}
	}
	return s
}
