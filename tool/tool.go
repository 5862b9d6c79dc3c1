package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Tool is something a model can call: it describes itself with a [model.ToolSpec] and runs on the
// raw JSON arguments the model wrote.
//
// Spec must return the same value every time. Call may be called by many goroutines at once; it
// should honour ctx (the executor cancels it at the tool's timeout) and read per-call context with
// [CallInfoFrom].
//
// Call returns an error when the tool failed; the executor turns it into an error result the model
// can read. A tool that wants to tell the model something went wrong in its own words returns a
// Result with IsError set instead. Errors of type [*ArgumentError] mean the model's arguments were
// wrong, and their message says how.
type Tool interface {
	Spec() model.ToolSpec
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}

// Result is what a tool gives back.
//
// Content is the text the model reads. Structured holds the same answer as JSON for programs (an
// MCP client, the graph node, a UI); when Content is empty the model reads Structured instead.
// Parts carries non-text content such as images. Command is opaque to this package: the graph node
// that runs tools applies it as a state update; nil means no update. The agent package's tool
// nodes accept an [Update] (keys of any state), a value of the graph's state type, or a struct
// whose JSON keys are state keys.
type Result struct {
	Content    string
	Structured json.RawMessage
	Parts      []message.Part
	IsError    bool
	Command    any
}

// Update is a Command that updates graph state by key, for any state type: each key is a state
// key (the field's JSON name) and its value is written through that key's reducer, converted
// through JSON when it is not already of the field's type. Keys the state does not have make the
// tool node fail with an error naming them. See react.ApplyCommand.
//
//	return &tool.Result{Content: "added", Command: tool.Update{"cart": []string{sku}, "status": "open"}}, nil
type Update map[string]any

// Text returns the text the model reads: Content, or the structured JSON when there is no Content.
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	if r.Content != "" || len(r.Structured) == 0 {
		return r.Content
	}
	return string(r.Structured)
}

// Text returns a result that holds text.
func Text(s string) *Result { return &Result{Content: s} }

// Errorf returns an error result: a failure reported to the model in the tool's own words.
func Errorf(format string, args ...any) *Result {
	return &Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Policy says how an executor treats a tool. The zero Policy means: anyone may call it, the
// executor's default timeout applies, and its output is trusted (not labelled as external data).
type Policy struct {
	// Permissions lists what a caller must hold, all of them, to run the tool; they are compared
	// with [CallInfo].Permissions. Empty means no permission is needed.
	Permissions []string
	// Timeout bounds one call; zero means the executor's default, and a negative value no limit
	// (the call then runs on the caller's goroutine, see [Executor.Run]).
	Timeout time.Duration
	// External marks output that comes from outside the system (web pages, e-mails, documents,
	// third-party APIs). [LabelExternal] wraps such output as data before the model sees it.
	External bool
}

// Policied is implemented by tools that carry a [Policy]. Tools built by [New] and wrapped by
// [WithPolicy] do.
type Policied interface {
	Policy() Policy
}

// PolicyOf returns t's policy, or the zero Policy when it has none.
func PolicyOf(t Tool) Policy {
	if p, ok := t.(Policied); ok {
		return p.Policy()
	}
	return Policy{}
}

// WithPolicy returns t with the given policy attached, replacing any it had. The returned tool
// still passes other optional interfaces of t (such as [OutputSchemaer]) through.
func WithPolicy(t Tool, p Policy) Tool {
	p.Permissions = append([]string(nil), p.Permissions...)
	return &policied{Tool: t, policy: p}
}

type policied struct {
	Tool
	policy Policy
}

func (p *policied) Policy() Policy { return p.policy }

func (p *policied) OutputSchema() json.RawMessage {
	if o, ok := p.Tool.(OutputSchemaer); ok {
		return o.OutputSchema()
	}
	return nil
}

// OutputSchemaer is implemented by tools that know the JSON Schema of their structured output.
// The MCP server advertises it.
type OutputSchemaer interface {
	OutputSchema() json.RawMessage
}

// Errors returned by this package. Use [errors.Is] to test for them; the concrete errors carry
// the tool's name and a hint.
var (
	// ErrUnknownTool: the model called a tool the executor does not have.
	ErrUnknownTool = errors.New("tool: unknown tool")
	// ErrInvalidArguments: the arguments were not valid JSON or did not match the schema.
	ErrInvalidArguments = errors.New("tool: invalid arguments")
	// ErrPermissionDenied: the caller lacks a permission the tool requires.
	ErrPermissionDenied = errors.New("tool: permission denied")
	// ErrDisabled: the tool is switched off for the caller's tenant.
	ErrDisabled = errors.New("tool: tool disabled")
	// ErrTimeout: the tool did not finish within its timeout.
	ErrTimeout = errors.New("tool: timed out")
	// ErrPanic: the tool panicked.
	ErrPanic = errors.New("tool: panicked")
	// ErrInvalidTool: a tool's definition is unusable (bad name, bad schema, duplicate).
	ErrInvalidTool = errors.New("tool: invalid tool definition")
)

// validName is what every provider accepts in a tool name (OpenAI's rule is the strictest).
var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// CheckSpec reports whether a spec is usable by every provider: a name of 1 to 64 letters, digits,
// '_' or '-', and parameters that are a JSON object schema.
func CheckSpec(s model.ToolSpec) error {
	if !validName.MatchString(s.Name) {
		return &DefinitionError{Tool: s.Name, Problem: "name must be 1 to 64 letters, digits, '_' or '-'",
			Hint: "rename the tool, for example " + fmt.Sprintf("%q", SanitizeName(s.Name))}
	}
	if len(s.Parameters) == 0 {
		return &DefinitionError{Tool: s.Name, Problem: "parameters schema is empty",
			Hint: `use {"type":"object"} for a tool without arguments`}
	}
	var obj struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(s.Parameters, &obj); err != nil {
		return &DefinitionError{Tool: s.Name, Problem: "parameters schema is not a JSON object: " + err.Error(),
			Hint: "give a JSON Schema object"}
	}
	if obj.Type != "object" {
		return &DefinitionError{Tool: s.Name, Problem: fmt.Sprintf("parameters schema has type %v, want \"object\"", obj.Type),
			Hint: "models call tools with a JSON object of named arguments; wrap a single value in a struct"}
	}
	return nil
}

// SanitizeName turns any string into a valid tool name: characters outside [a-zA-Z0-9_-] become
// '_' and the result is cut to 64 bytes. An empty input gives "tool".
func SanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "tool"
	}
	return string(b)
}

// DefinitionError says why a tool cannot be built or registered.
type DefinitionError struct {
	Tool    string
	Problem string
	Hint    string
}

func (e *DefinitionError) Error() string {
	s := fmt.Sprintf("tool: invalid tool %q: %s", e.Tool, e.Problem)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrInvalidTool) true.
func (e *DefinitionError) Unwrap() error { return ErrInvalidTool }

// CallError says why one tool call failed. Its message is written for the model: it names the tool
// and says what to do next.
type CallError struct {
	Tool   string
	CallID string
	// Kind is one of the Err sentinels of this package, or nil for an error the tool returned.
	Kind error
	// Err is the underlying error, if any.
	Err  error
	Hint string
}

func (e *CallError) Error() string {
	var s string
	switch {
	case e.Kind != nil && e.Err != nil:
		s = fmt.Sprintf("%v: %q: %v", e.Kind, e.Tool, e.Err)
	case e.Kind != nil:
		s = fmt.Sprintf("%v: %q", e.Kind, e.Tool)
	default:
		s = fmt.Sprintf("tool: %q failed: %v", e.Tool, e.Err)
	}
	if e.Hint != "" {
		s += ". " + e.Hint
	}
	return s
}

// Unwrap returns both the kind and the cause, so errors.Is matches either.
func (e *CallError) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
