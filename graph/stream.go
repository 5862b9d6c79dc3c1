package graph

import (
	"fmt"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/message"
)

// StreamMode selects a kind of event from a run.
type StreamMode string

// Stream modes. A run streams ModeValues unless told otherwise with [WithStreamModes].
const (
	// ModeValues: the whole state after the input and after every superstep. Data is S.
	ModeValues StreamMode = "values"
	// ModeUpdates: each node's update when its superstep completes. Data is S (the partial
	// update), Node names the node. An interrupt arrives as Node "__interrupt__" with Data
	// []Interruption.
	ModeUpdates StreamMode = "updates"
	// ModeMessages: model token chunks as nodes stream them. Data is MessageChunk.
	ModeMessages StreamMode = "messages"
	// ModeCustom: values nodes send with [Emit]. Data is whatever they sent.
	ModeCustom StreamMode = "custom"
	// ModeDebug: task starts and results and checkpoints, for inspectors. Data is DebugEvent.
	ModeDebug StreamMode = "debug"
	// ModeCheckpoints: every checkpoint as it is made. Data is CheckpointEvent[S].
	ModeCheckpoints StreamMode = "checkpoints"
	// ModeTasks: every task as it starts and finishes. Data is TaskEvent.
	ModeTasks StreamMode = "tasks"
)

// AllModes lists every stream mode.
var AllModes = []StreamMode{ModeValues, ModeUpdates, ModeMessages, ModeCustom, ModeDebug, ModeCheckpoints, ModeTasks}

// ParseStreamMode checks a mode name from outside (an HTTP request, a flag).
func ParseStreamMode(s string) (StreamMode, error) {
	for _, m := range AllModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("graph: unknown stream mode %q (known: values, updates, messages, custom, debug, checkpoints, tasks)", s)
}

type modeSet uint8

func (m modeSet) has(mode StreamMode) bool {
	for i, x := range AllModes {
		if x == mode {
			return m&(1<<i) != 0
		}
	}
	return false
}

func modesOf(modes []StreamMode) modeSet {
	var s modeSet
	for _, mode := range modes {
		for i, x := range AllModes {
			if x == mode {
				s |= 1 << i
			}
		}
	}
	return s
}

// Event is one item of a run's stream.
type Event struct {
	Mode StreamMode
	// NS is the subgraph path the event comes from: empty for the root graph, otherwise one
	// "node:task" element per level.
	NS []string
	// Node is the node the event concerns, if any.
	Node string
	// Step is the superstep.
	Step int
	// TaskID identifies the task for task-scoped events.
	TaskID string
	// Data depends on Mode (see the mode constants).
	Data any
	// Cached marks an update (ModeUpdates) of a task that did not run: its writes were restored
	// from the checkpoint's pending writes, taken from the node's cache ([WithCache]), or are a
	// functional task's recorded result ([Task]), as LangGraph's __metadata__.cached does.
	Cached bool
}

// MessageChunk is a piece of a message a model is writing: Message holds only what is new (a
// text delta, a tool call or part of one); all chunks of one message share Message.ID.
type MessageChunk struct {
	Message message.Message `json:"message"`
	// Metadata says which model wrote it and anything else the emitter adds. An emitter may
	// give the chunks of one message the same map: readers must not modify it.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TaskEvent reports a task starting (Result and Error empty, Finished false) or finishing.
type TaskEvent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Finished bool   `json:"finished"`
	Input    any    `json:"input,omitempty"`
	// Triggers says what started the task, as LangGraph names it: "branch:to:<node>" for a node
	// an edge, a route or a Command reached, "__pregel_push" for a Send. Set on the start only.
	Triggers   []string       `json:"triggers,omitempty"`
	Result     any            `json:"result,omitempty"`
	Error      string         `json:"error,omitempty"`
	Interrupts []Interruption `json:"interrupts,omitempty"`
}

// CheckpointEvent reports a checkpoint just written.
type CheckpointEvent[S any] struct {
	Ref      checkpoint.Ref  `json:"config"`
	Parent   *checkpoint.Ref `json:"parent_config,omitempty"`
	Values   S               `json:"values"`
	Next     []string        `json:"next"`
	Metadata map[string]any  `json:"metadata"`
	// Tasks are the tasks the checkpoint leaves to run, in the order of Next, with the
	// interrupts those that paused are waiting at.
	Tasks []CheckpointTask `json:"tasks"`
}

// CheckpointTask is one task a checkpoint leaves to run.
type CheckpointTask struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Interrupts []Interruption `json:"interrupts"`
	// Error is the error the task failed with in the superstep that stopped there, if it did.
	Error string `json:"error,omitempty"`
	// Result, for a task that finished in a superstep that stopped at another task's interrupt,
	// is what it wrote (kept as pending writes, not run again on resume): [channel, value] pairs,
	// in the state's key order.
	Result [][2]any `json:"result,omitempty"`
	// State, for a subgraph node's task, names the subgraph's checkpoints as LangGraph does: a
	// config {"configurable": {"thread_id", "checkpoint_ns"}}.
	State map[string]any `json:"state,omitempty"`
}

// DebugEvent wraps a task or checkpoint event for the debug mode.
type DebugEvent struct {
	Type    string `json:"type"` // "task", "task_result" or "checkpoint"
	Step    int    `json:"step"`
	Payload any    `json:"payload"`
}
