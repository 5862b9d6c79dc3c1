package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

// GraphToolOptions configure [GraphTool]. Every zero value is a documented default.
type GraphToolOptions struct {
	// Name is the tool's name; empty means the graph's name (made a valid tool name).
	Name string
	// Description tells the model (or MCP client) what the graph does; empty means a sentence
	// naming the graph and its output keys. Write one: it is what callers choose tools by.
	Description string
	// RunOptions apply to every run (recursion limit, durability, ...).
	RunOptions []graph.RunOption
	// NewThread runs each call on a thread of its own, with a new ID: set it for a graph
	// compiled with a checkpoint saver (which needs a thread per run). False runs without one.
	NewThread bool
}

// GraphTool wraps a compiled graph (its [graph.Compiled.Runnable] view) as a tool, so that a
// model can call it and [tool/mcp] can serve it to MCP clients.
//
// The tool's parameters are the graph's input keys, described by a JSON Schema derived from the
// state type; none is required. A key holding a conversation ([]message.Message) also accepts a
// plain string, taken as one user message. The result is the graph's final state restricted to
// its output keys, as a JSON object in Result.Structured (the text a model reads).
//
// Each call runs the graph once. The caller's tool.CallInfo reaches the graph as run
// configuration (keys "user", "tenant", "permissions", see graph.Info.Config). A run that
// pauses at an interrupt cannot be resumed through a tool call: it ends in an error result
// that says where it paused and what it asked.
func GraphTool(r graph.Runnable, o *GraphToolOptions) (tool.Tool, error) {
	if r == nil {
		return nil, errors.New("agent: GraphTool needs a compiled graph")
	}
	var opts GraphToolOptions
	if o != nil {
		opts = *o
	}
	name := opts.Name
	if name == "" {
		name = tool.SanitizeName(r.Name())
	}
	params, convKeys, err := inputSchema(r)
	if err != nil {
		return nil, fmt.Errorf("agent: GraphTool %q: %w", name, err)
	}
	desc := opts.Description
	if desc == "" {
		desc = fmt.Sprintf("Runs the %q graph on the given input and returns its final %s.", r.Name(), strings.Join(r.OutputKeys(), ", "))
	}
	spec := model.ToolSpec{Name: name, Description: desc, Parameters: params}
	outputs := r.OutputKeys()
	return tool.NewRaw(spec, func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		input, err := conversationArgs(name, args, convKeys)
		if err != nil {
			return nil, err
		}
		runOpts := slices.Clone(opts.RunOptions)
		if info, ok := tool.CallInfoFrom(ctx); ok {
			runOpts = append(runOpts, graph.WithConfig(map[string]any{"user": info.User, "tenant": info.Tenant, "permissions": info.Permissions}))
		}
		thread := ""
		if opts.NewThread {
			thread = "tool-" + message.NewID()
			runOpts = append(runOpts, graph.WithThread(thread))
		}
		runOpts = append(runOpts, graph.WithStreamModes(graph.ModeValues))
		var final any
		var runErr error
		for ev, err := range r.Stream(ctx, input, runOpts...) {
			if err != nil {
				runErr = err
				break
			}
			if ev.Mode == graph.ModeValues && len(ev.NS) == 0 {
				final = ev.Data
			}
		}
		var ie *graph.InterruptedError
		if errors.As(runErr, &ie) {
			what, _ := json.Marshal(ie)
			where := ""
			if thread != "" {
				where = fmt.Sprintf(" on thread %q", thread)
			}
			return tool.Errorf("The graph %q paused%s for human input (%s), which a tool call cannot give. Answer it through the server's threads API to resume the run.", r.Name(), where, what), nil
		}
		if runErr != nil {
			return nil, runErr
		}
		out, err := restrict(final, outputs)
		if err != nil {
			return nil, fmt.Errorf("agent: graph %q output: %w", r.Name(), err)
		}
		return &tool.Result{Structured: out}, nil
	})
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	messagesType   = reflect.TypeFor[[]message.Message]()
)

// inputSchema derives the tool's parameters from the graph's state type and input keys. It
// returns the keys that hold conversations.
func inputSchema(r graph.Runnable) (json.RawMessage, []string, error) {
	t := r.StateType()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{
		IgnoreInvalidTypes: true,
		TypeSchemas:        map[reflect.Type]*jsonschema.Schema{rawMessageType: {Description: "any JSON value"}},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot describe state %s as JSON Schema: %w", t, err)
	}
	var conv []string
	if t.Kind() == reflect.Struct {
		for f := range t.Fields() {
			jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if jsonName == "" {
				jsonName = f.Name
			}
			if f.Type == messagesType && s.Properties[jsonName] != nil {
				conv = append(conv, jsonName)
				arr := s.Properties[jsonName]
				arr.Type, arr.Types = "array", nil
				s.Properties[jsonName] = &jsonschema.Schema{
					Description: "the conversation: a list of messages, or a string taken as one user message",
					AnyOf:       []*jsonschema.Schema{{Type: "string"}, arr},
				}
			}
		}
	}
	keep := r.InputKeys()
	for k := range s.Properties {
		if !slices.Contains(keep, k) {
			delete(s.Properties, k)
		}
	}
	s.Required = nil
	s.PropertyOrder = nil
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	return raw, conv, nil
}

// conversationArgs turns a plain string given for a conversation key into one user message.
func conversationArgs(name string, args json.RawMessage, keys []string) (json.RawMessage, error) {
	if len(keys) == 0 || len(args) == 0 {
		return args, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, &tool.ArgumentError{Tool: name, Problems: []tool.Problem{{Path: "", Message: "arguments must be a JSON object: " + err.Error()}}}
	}
	changed := false
	for _, k := range keys {
		var text string
		if v, ok := obj[k]; ok && json.Unmarshal(v, &text) == nil {
			data, err := json.Marshal([]message.Message{message.User(text)})
			if err != nil {
				return nil, err
			}
			obj[k] = data
			changed = true
		}
	}
	if !changed {
		return args, nil
	}
	return json.Marshal(obj)
}

// restrict encodes state and keeps only the output keys.
func restrict(state any, keys []string) (json.RawMessage, error) {
	if state == nil {
		return json.RawMessage(`{}`), nil
	}
	data, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return data, nil // not an object: give it as it is
	}
	for k := range obj {
		if !slices.Contains(keys, k) {
			delete(obj, k)
		}
	}
	return json.Marshal(obj)
}
