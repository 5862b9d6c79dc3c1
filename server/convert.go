package server

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/lcwire"
)

// knownStreamModes are the stream_mode values a run accepts. "messages-tuple" streams token
// chunks as [message, metadata] pairs in "messages" events; "messages" streams them accumulated
// in "messages/partial" events, as the LangGraph API does for the SDK's messages mode;
// "events" streams LangChain callback events (see package lcstream).
var knownStreamModes = []string{"values", "updates", "messages", "messages-tuple", "custom", "debug", "tasks", "checkpoints", "events", progressMode}

// parseStreamModes checks the requested modes and returns the graph modes they need.
func parseStreamModes(modes []string) ([]graph.StreamMode, error) {
	var out []graph.StreamMode
	add := func(m graph.StreamMode) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	for _, m := range modes {
		switch m {
		case "messages": // token chunks, and the state's messages as they complete
			add(graph.ModeMessages)
			add(graph.ModeValues)
		case "messages-tuple": // token chunks, and the messages nodes return (from their tasks)
			add(graph.ModeMessages)
			add(graph.ModeTasks)
		case progressMode: // the run's progress, from the task events (progress.go)
			add(graph.ModeTasks)
		case "events":
			add(graph.ModeValues)
			add(graph.ModeTasks)
			add(graph.ModeMessages)
			add(graph.ModeCustom) // tool calls as they start and end (lcstream.ToolObserver)
		default:
			gm, err := graph.ParseStreamMode(m)
			if err != nil {
				return nil, badRequest("known stream modes: "+strings.Join(knownStreamModes, ", "), "unknown stream_mode %q", m)
			}
			add(gm)
		}
	}
	return out, nil
}

// ThreadState is a thread's state at one checkpoint, as GET /threads/{id}/state returns it.
type ThreadState struct {
	Values           any              `json:"values"`
	Next             []string         `json:"next"`
	Tasks            []map[string]any `json:"tasks"`
	Metadata         map[string]any   `json:"metadata"`
	CreatedAt        *time.Time       `json:"created_at"`
	Checkpoint       any              `json:"checkpoint"`
	ParentCheckpoint any              `json:"parent_checkpoint"`
	Config           any              `json:"config"`
	ParentConfig     any              `json:"parent_config"`
	Interrupts       []map[string]any `json:"interrupts"`
}

func threadStateOf(snap *graph.StateSnapshot[any]) *ThreadState {
	values := snap.Values
	if values == nil {
		values = map[string]any{} // a subgraph that has not checkpointed yet
	}
	ts := &ThreadState{Values: values, Next: snap.Next, Metadata: snap.Metadata, Tasks: []map[string]any{}, Interrupts: []map[string]any{}}
	if ts.Next == nil {
		ts.Next = []string{}
	}
	if ts.Metadata == nil {
		ts.Metadata = map[string]any{}
	}
	if !snap.CreatedAt.IsZero() {
		t := snap.CreatedAt
		ts.CreatedAt = &t
	}
	ref := snap.Ref
	ts.Checkpoint, ts.Config = lcwire.Checkpoint(&ref), lcwire.Config(&ref)
	ts.ParentCheckpoint, ts.ParentConfig = lcwire.Checkpoint(snap.Parent), lcwire.Config(snap.Parent)
	for _, t := range snap.Tasks {
		var errv any
		if t.Error != "" {
			errv = t.Error
		}
		// As the LangGraph API: a subgraph task names its checkpoint namespace in checkpoint,
		// or, read with subgraphs=true, carries the subgraph's own state in state instead.
		var cp, state any
		switch {
		case t.State != nil:
			state = threadStateOf(t.State)
		case t.Checkpoint != nil:
			cp = map[string]any{"thread_id": t.Checkpoint.ThreadID, "checkpoint_ns": t.Checkpoint.NS}
		}
		ts.Tasks = append(ts.Tasks, map[string]any{"id": t.ID, "name": t.Name, "error": errv, "interrupts": lcwire.Interrupts(t.Interrupts), "checkpoint": cp, "state": state})
		ts.Interrupts = append(ts.Interrupts, lcwire.Interrupts(t.Interrupts)...)
	}
	return ts
}

// streamMetadata is the metadata LangGraph attaches to a run's message chunks and callback
// events: the run's own metadata (from the request), its IDs (run_id, thread_id, assistant_id,
// graph_id, user_id), and the scalar values of its config.configurable (as LangChain copies
// them), the IDs winning; and the run's config tags, which head every message's tags. Both are
// nil for runs whose modes send no metadata. The graph ID is that of the run's assistant, found
// with assistants.
func streamMetadata(run *Run, assistants assistantSource) (map[string]any, []string) {
	kw := run.Kwargs
	if kw == nil || !slices.ContainsFunc(kw.StreamMode, func(m string) bool { return m == "messages" || m == "messages-tuple" || m == "events" }) {
		return nil, nil
	}
	md := make(map[string]any, len(run.Metadata)+8)
	if c, ok := kw.Config["configurable"].(map[string]any); ok {
		for k, v := range c {
			switch v.(type) {
			case string, float64, bool:
				if !strings.HasPrefix(k, "__") {
					md[k] = v
				}
			}
		}
	}
	maps.Copy(md, run.Metadata)
	md["run_id"], md["thread_id"], md["assistant_id"] = run.RunID, run.ThreadID, run.AssistantID
	if a, err := assistants.assistant(run.AssistantID); err == nil {
		md["graph_id"] = a.GraphID
	}
	if kw.User != "" {
		md["user_id"] = kw.User
	}
	tags := []string{}
	if ts, ok := kw.Config["tags"].([]any); ok {
		for _, t := range ts {
			if t, ok := t.(string); ok {
				tags = append(tags, t)
			}
		}
	}
	return md, tags
}

// errorJSON is the data of an "error" event.
func errorJSON(err error) map[string]any {
	return map[string]any{"error": errorName(err), "message": err.Error()} // api_conf.go
}
