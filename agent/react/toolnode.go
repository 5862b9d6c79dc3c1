package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

// ToolNodeOptions configure [NewToolNode]. Every zero value is a documented default.
type ToolNodeOptions struct {
	// Executor options for running the tools (timeouts, permissions, tenants, filters). Unless
	// Propagate is set, the graph's interrupts raised by a tool pause the run.
	Executor *tool.ExecutorOptions
	// MessagesKey is the state key that holds the conversation ([]message.Message, normally with
	// the "messages" reducer); "" means "messages".
	MessagesKey string
}

// NewToolNode returns a graph node for any state type S that runs the tool calls of the last
// assistant message in S's conversation, appends one tool message per call, and applies the
// Commands the tools return with [ApplyCommand]. Add it with graph.AddNode and route to it when
// the model asks for tools; the ReAct agent uses the same machinery.
//
// It fails when S has no MessagesKey key of type []message.Message, or when a tool is invalid.
func NewToolNode[S any](tools []tool.Tool, o *ToolNodeOptions) (graph.NodeFunc[S], error) {
	var opts ToolNodeOptions
	if o != nil {
		opts = *o
	}
	key := opts.MessagesKey
	if key == "" {
		key = "messages"
	}
	keys, err := stateKeysOf(reflect.TypeFor[S]())
	if err != nil {
		return nil, err
	}
	f, ok := keys.byName[key]
	if !ok || f.typ != reflect.TypeFor[[]message.Message]() {
		return nil, fmt.Errorf("react: NewToolNode: state %s has no key %q of type []message.Message (its keys: %s)", keys.typ, key, strings.Join(keys.names, ", "))
	}
	exec, err := newExecutor(tools, opts.Executor)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, s S) (S, error) {
		var zero S
		msgs, _ := reflect.ValueOf(s).Field(f.index).Interface().([]message.Message)
		last := lastAssistant(msgs)
		if last == nil || len(last.ToolCalls) == 0 {
			return zero, nil
		}
		info, _ := tool.CallInfoFrom(ctx)
		info.State = s
		info.Store = graph.StoreFrom(ctx)
		outcomes, err := exec.Run(tool.WithCallInfo(ctx, info), last.ToolCalls)
		if err != nil {
			return zero, err
		}
		// The tool messages are written first, so that a command that also adds messages puts
		// them after the results, never between a call and its result.
		if err := graph.Write(ctx, key, tool.Messages(outcomes)); err != nil {
			return zero, err
		}
		if err := applyOutcomes[S](ctx, outcomes); err != nil {
			return zero, err
		}
		return zero, nil
	}, nil
}

func newExecutor(tools []tool.Tool, o *tool.ExecutorOptions) (*tool.Executor, error) {
	var eo tool.ExecutorOptions
	if o != nil {
		eo = *o
	}
	if eo.Propagate == nil {
		// A tool that pauses the run for a person must pause it, not fail.
		eo.Propagate = func(err error) bool {
			var ie *graph.InterruptedError
			return errors.As(err, &ie)
		}
	}
	exec, err := tool.NewExecutor(tools, &eo)
	if err != nil {
		return nil, fmt.Errorf("react: %w", err)
	}
	return exec, nil
}

// Command is a tool's Result.Command that steers the graph as well as updating it, as a
// LangGraph tool's Command does: Update is written to the state (any form [ApplyCommand] takes),
// and Goto names the nodes that run next instead of the agent's model. With Parent, the command
// is for the graph that holds the agent as a subgraph: the agent stops there, Goto names the
// parent's nodes and Update, of the parent's state type, is applied to the parent (a handoff;
// see the swarm package). Only the ReAct agent's tool node steers; NewToolNode applies the update.
type Command struct {
	Update any
	Goto   []graph.Target
	Parent bool
}

// commandOf returns the outcome's Command, if its tool returned one.
func commandOf(o tool.Outcome) *Command {
	if o.Result == nil {
		return nil
	}
	switch c := o.Result.Command.(type) {
	case *Command:
		return c
	case Command:
		return &c
	}
	return nil
}

// applyOutcomes applies the outcomes' commands in call order, naming the tool in an error.
// Commands for the parent graph are left to steering.
func applyOutcomes[S any](ctx context.Context, outcomes []tool.Outcome) error {
	for _, o := range outcomes {
		if o.Result == nil || o.Result.Command == nil {
			continue
		}
		cmd := o.Result.Command
		if c := commandOf(o); c != nil {
			if c.Parent {
				continue
			}
			cmd = c.Update
		}
		if err := ApplyCommand[S](ctx, cmd); err != nil {
			return fmt.Errorf("react: tool %q (call %s): %w", o.Call.Name, o.Call.ID, err)
		}
	}
	return nil
}

// steering collects where the outcomes' Commands send the graph, in call order, and the first
// Command meant for the parent graph.
func steering(outcomes []tool.Outcome) (gotos []graph.Target, parent *Command) {
	for _, o := range outcomes {
		c := commandOf(o)
		switch {
		case c == nil:
		case c.Parent && parent == nil:
			parent = c
		case !c.Parent:
			gotos = append(gotos, c.Goto...)
		}
	}
	return gotos, parent
}

// ApplyCommand writes a tool's Command into the state of the running graph node (see
// graph.Write), so any state type S can take updates from tools that do not know it:
//
//   - a [tool.Update] (or map[string]any) writes each key; its value is used as it is when it has
//     the field's type, and is otherwise converted through JSON;
//   - a value of type S (or *S) writes its non-zero fields, as a node's returned update would;
//   - any other struct (or pointer to one) is read as the JSON object it encodes to, and each of
//     its keys is written like an Update's.
//
// Every key is checked before anything is written: keys S does not have give an error naming
// them and the keys S has. It must be called from inside a running node.
func ApplyCommand[S any](ctx context.Context, cmd any) error {
	keys, err := stateKeysOf(reflect.TypeFor[S]())
	if err != nil {
		return err
	}
	switch c := cmd.(type) {
	case nil:
		return nil
	case tool.Update:
		return keys.writeMap(ctx, c)
	case map[string]any:
		return keys.writeMap(ctx, c)
	case S:
		return keys.writeStruct(ctx, reflect.ValueOf(c))
	case *S:
		if c == nil {
			return nil
		}
		return keys.writeStruct(ctx, reflect.ValueOf(c).Elem())
	case *Command:
		if c == nil || c.Parent {
			return nil
		}
		return ApplyCommand[S](ctx, c.Update)
	case Command:
		if c.Parent {
			return nil
		}
		return ApplyCommand[S](ctx, c.Update)
	}
	v := reflect.ValueOf(cmd)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return fmt.Errorf("command of type %T cannot update state %s: return a tool.Update, a %s, or a struct whose JSON keys are state keys", cmd, keys.typ, keys.typ)
	}
	data, err := json.Marshal(cmd)
	if err != nil {
		return fmt.Errorf("command of type %T cannot be encoded: %w", cmd, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("command of type %T does not encode to a JSON object: %w", cmd, err)
	}
	m := make(map[string]any, len(raw))
	for k, v := range raw {
		m[k] = v
	}
	return keys.writeMap(ctx, m)
}

// stateKeys is the key layout of a state struct, named as the graph names its keys (the JSON
// name of each exported field; "-" skips it).
type stateKeys struct {
	typ    reflect.Type
	byName map[string]stateKey
	names  []string // sorted
}

type stateKey struct {
	index int
	typ   reflect.Type
}

var stateKeysCache sync.Map // reflect.Type -> *stateKeys

func stateKeysOf(t reflect.Type) (*stateKeys, error) {
	if k, ok := stateKeysCache.Load(t); ok {
		return k.(*stateKeys), nil
	}
	keys, err := graph.StateKeys(t)
	if err != nil {
		return nil, err
	}
	k := &stateKeys{typ: t, byName: map[string]stateKey{}}
	for _, key := range keys {
		k.byName[key.Name] = stateKey{index: key.Field.Index[0], typ: key.Field.Type}
		k.names = append(k.names, key.Name)
	}
	sort.Strings(k.names)
	stateKeysCache.Store(t, k)
	return k, nil
}

// writeMap checks every key, converts every value, then writes them in key order.
func (k *stateKeys) writeMap(ctx context.Context, m map[string]any) error {
	var unknown []string
	for name := range m {
		if _, ok := k.byName[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("update names unknown state keys %s of %s (its keys: %s)", quoteAll(unknown), k.typ, strings.Join(k.names, ", "))
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	vals := make([]any, len(names))
	for i, name := range names {
		v, err := convert(m[name], k.byName[name].typ)
		if err != nil {
			return fmt.Errorf("update of state key %q: %w", name, err)
		}
		vals[i] = v
	}
	for i, name := range names {
		if err := graph.Write(ctx, name, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// writeStruct writes the non-zero fields of a value of the state type.
func (k *stateKeys) writeStruct(ctx context.Context, v reflect.Value) error {
	for _, name := range k.names {
		f := v.Field(k.byName[name].index)
		if f.IsZero() {
			continue
		}
		if err := graph.Write(ctx, name, f.Interface()); err != nil {
			return err
		}
	}
	return nil
}

// convert returns v as a value of type t: itself when it is assignable, otherwise through JSON.
func convert(v any, t reflect.Type) (any, error) {
	if v == nil {
		return reflect.Zero(t).Interface(), nil
	}
	if reflect.TypeOf(v).AssignableTo(t) {
		return v, nil
	}
	data, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if data, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("value of type %T cannot be encoded: %w", v, err)
		}
	}
	p := reflect.New(t)
	if err := json.Unmarshal(data, p.Interface()); err != nil {
		return nil, fmt.Errorf("value %.100s does not fit %s: %w", data, t, err)
	}
	return p.Elem().Interface(), nil
}

func quoteAll(s []string) string {
	q := slices.Clone(s)
	for i := range q {
		q[i] = fmt.Sprintf("%q", q[i])
	}
	return strings.Join(q, ", ")
}
