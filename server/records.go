package server

import (
	"encoding/json"
	"time"
)

// The API's records: what the routes answer with and the runner works on. The metadata
// database (server/internal/metadb) stores them as rows of its own; meta.go converts.

// Thread is a conversation's record: its metadata and status; its state lives in checkpoints.
type Thread struct {
	ThreadID  string    `json:"thread_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// StateUpdatedAt is when the thread's state (values, interrupts) last changed: a run ended,
	// update-state, creation. Sorting by it lists the threads most recently worked on first.
	StateUpdatedAt time.Time      `json:"state_updated_at"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	// Values and Interrupts are the state's newest values and waiting interrupts by task ID;
	// {} on a thread with no state yet, as LangGraph answers.
	Values     json.RawMessage `json:"values"`
	Interrupts json.RawMessage `json:"interrupts"`
	Config     map[string]any  `json:"config"`
	tenant     string
	temporary  bool
	ttlMS      int64 // set at creation: see ttl.go
}

// Thread statuses.
const (
	ThreadIdle        = "idle"
	ThreadBusy        = "busy"
	ThreadInterrupted = "interrupted"
	ThreadError       = "error"
)

// Run statuses.
const (
	RunPending     = "pending"
	RunRunning     = "running"
	RunSuccess     = "success"
	RunError       = "error"
	RunInterrupted = "interrupted"
	RunTimeout     = "timeout"
)

// Run is one execution of an assistant on a thread.
type Run struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	Status            string         `json:"status"`
	Metadata          map[string]any `json:"metadata"`
	Kwargs            *RunKwargs     `json:"kwargs"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	// The fields below are trellis's own (the LangGraph SDK ignores them); see progress.go.
	//
	// Priority orders the run among those waiting for a slot (low, normal or high).
	Priority Priority `json:"priority"`
	// Attempt counts the run's starts: 0 before the first, more than 1 after its worker died
	// or a transient error.
	Attempt int `json:"attempt"`
	// Progress is how far the run got: the node running, the supersteps, each node's history.
	// Nil before the run starts.
	Progress *RunProgress `json:"progress,omitempty"`
	// LastError is the error of the run's last failed attempt (the final one, or one it is
	// retried after).
	LastError string `json:"last_error,omitempty"`
	// NextAttemptAt is when a run waiting to be tried again (after a transient error) or
	// scheduled (after_seconds) is due.
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	tenant        string
}

// RunKwargs is what a run was created with.
type RunKwargs struct {
	Input           json.RawMessage `json:"input,omitempty"`
	Command         *RunCommand     `json:"command,omitempty"`
	Config          map[string]any  `json:"config,omitempty"`
	Context         map[string]any  `json:"context,omitempty"`
	StreamMode      []string        `json:"stream_mode"`
	InterruptBefore []string        `json:"interrupt_before,omitempty"`
	InterruptAfter  []string        `json:"interrupt_after,omitempty"`
	Webhook         string          `json:"webhook,omitempty"`
	Subgraphs       bool            `json:"subgraphs,omitempty"`
	Resumable       bool            `json:"resumable,omitempty"`
	Temporary       bool            `json:"temporary,omitempty"`
	CheckpointID    string          `json:"checkpoint_id,omitempty"`
	OnDisconnect    string          `json:"on_disconnect,omitempty"`
	// Priority is the run's priority; empty means normal.
	Priority string `json:"priority,omitempty"`
	// Durability is the run's checkpoint durability (sync, async, exit); empty means the
	// graph's own (sync unless its CompileOptions say otherwise).
	Durability string `json:"durability,omitempty"`
	// StartAfter, when set, is when the run may start (Unix milliseconds; after_seconds).
	StartAfter int64 `json:"start_after,omitempty"`
	// Principal is who created the run, handed to tools as tool.CallInfo.
	User        string   `json:"user,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
	// PerUser: the principal is scoped to its user; the run's store is the user's (see
	// tenantstore.go).
	PerUser bool `json:"per_user,omitempty"`
	// TraceContext is the W3C trace context of the request that created the run (telemetry.go).
	TraceContext map[string]string `json:"trace_context,omitempty"`
}

// RunCommand resumes or steers a paused thread.
type RunCommand struct {
	Resume json.RawMessage `json:"resume,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	Goto   json.RawMessage `json:"goto,omitempty"`
}

// AssistantVersion is one version of a created assistant, as POST /assistants/{id}/versions
// lists them.
type AssistantVersion struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }
