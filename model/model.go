package model

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/trellis-go/trellis/message"
)

// Model is a chat model: it answers a conversation with an assistant turn, whole or as a stream.
//
// Implementations must be safe for concurrent use: a graph may call one Model from several nodes
// in the same superstep. Neither method keeps or changes the Request after it returns.
type Model interface {
	// Generate returns the whole assistant turn. For a Request with a Schema, the reply is checked
	// against it (see [Request.Schema]).
	Generate(ctx context.Context, req *Request) (*Response, error)

	// Stream yields the assistant turn as it is produced. Text arrives as deltas; each tool call
	// arrives whole, once its name and arguments are complete, even when the provider split them
	// across many wire chunks. The last chunk carries the finish reason and, when the provider
	// reports it, the usage. After an error the stream stops; the error keeps the text streamed
	// so far (see [PartialText]). Breaking out of the loop early cancels the underlying request.
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// Identified is implemented by a model that can name its provider and model before it answers,
// as the providers of this module do; wrappers of a model pass it on. The messages stream uses it
// to label a reply's first chunk, which otherwise learns the names only from the reply's end.
type Identified interface {
	// Identity returns the provider ("openai", "anthropic", ...) and its model name; either
	// may be empty when unknown.
	Identity() (provider, name string)
}

// IdentityOf returns m's provider and model name when m is [Identified] (or wraps, through
// Unwrap, a model that is), and two empty strings otherwise.
func IdentityOf(m Model) (provider, name string) {
	for range 16 { // wrappers are shallow; a cycle of Unwraps must not hang
		if id, ok := m.(Identified); ok {
			return id.Identity()
		}
		u, ok := m.(interface{ Unwrap() Model })
		if !ok {
			break
		}
		if m = u.Unwrap(); m == nil {
			break
		}
	}
	return "", ""
}

// OfflineProvider is the provider name the offline model (package model/offline) reports.
const OfflineProvider = "offline"

// IsOffline reports whether m is the offline model, or a wrapper of it (telemetry, budgets,
// compaction: any wrapper that passes Identity on or has an Unwrap() Model method). Apps use it
// to choose their rule-based paths, which must not run for a real model.
func IsOffline(m Model) bool {
	if m == nil {
		return false
	}
	provider, _ := IdentityOf(m)
	return provider == OfflineProvider
}

// Request is one call to a model.
//
// Only Messages is required. The zero value of every other field means "the provider's default".
type Request struct {
	// Messages is the conversation so far, oldest first: an optional system turn, then user,
	// assistant and tool turns. User turns may carry image parts.
	Messages []message.Message

	// Tools the model may call. Empty means none.
	Tools []ToolSpec

	// ToolChoice says whether the model must call a tool: "" or [ToolChoiceAuto] lets it decide,
	// [ToolChoiceNone] forbids tools, [ToolChoiceRequired] demands at least one call, and any other
	// value is the name of the one tool it must call.
	ToolChoice string

	// Temperature, when not nil, sets the sampling temperature.
	Temperature *float64

	// MaxTokens caps the length of the reply; 0 leaves it to the provider (Anthropic, which
	// requires a cap, then gets 4096).
	MaxTokens int

	// Stop lists sequences that end the reply.
	Stop []string

	// Schema, when set, asks for structured output: the reply's text is a JSON value that matches
	// the schema. Generate checks it, asks the model once to repair a reply that does not match,
	// and then fails with a *[StructuredOutputError]. The valid JSON is in [Response.Structured].
	Schema *Schema
}

// Tool choice values for [Request.ToolChoice]; any other value names a tool.
const (
	ToolChoiceAuto     = ""
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// Schema describes the JSON a structured-output request expects.
type Schema struct {
	// Name identifies the schema to the provider (letters, digits, '_' and '-'); "" means "output".
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// JSON is the JSON Schema of the reply, normally an object schema.
	JSON json.RawMessage `json:"schema"`
}

// SchemaName returns s.Name, or "output" when it is empty.
func (s *Schema) SchemaName() string {
	if s == nil || s.Name == "" {
		return "output"
	}
	return s.Name
}

// Response is a whole assistant turn.
type Response struct {
	// Message is the assistant turn: its text in Content and its tool calls in ToolCalls. Its
	// Metadata names the provider and model ("provider", "model").
	Message message.Message
	// Structured holds the validated JSON reply of a request with a Schema; nil otherwise.
	Structured json.RawMessage
	// Usage counts the tokens the call used, as reported by the provider (zero when it did not).
	Usage Usage
	// FinishReason says why the model stopped.
	FinishReason FinishReason
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Total returns input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// FinishReason says why a model stopped writing.
type FinishReason string

// The finish reasons every provider's own reasons are mapped onto.
const (
	FinishStop          FinishReason = "stop"           // a natural end or a stop sequence
	FinishLength        FinishReason = "length"         // MaxTokens was reached
	FinishToolCalls     FinishReason = "tool_calls"     // the turn ends with tool calls to run
	FinishContentFilter FinishReason = "content_filter" // the provider withheld content
)

// Chunk is one piece of a streamed assistant turn. Any mix of its fields may be set; a chunk with
// none set is never yielded.
type Chunk struct {
	// Text is a delta of the reply's text.
	Text string
	// ToolCallDelta reports progress on a tool call still being written, for interfaces that show
	// it; consumers that only need whole calls can ignore it.
	ToolCallDelta *ToolCallDelta
	// ToolCall is a whole tool call, yielded once its name and arguments are complete.
	ToolCall *message.ToolCall
	// Usage, when not nil, is the call's token count; providers send it at the end.
	Usage *Usage
	// FinishReason is set on the last chunk.
	FinishReason FinishReason
	// Metadata, when set on a chunk, is merged into the collected message's metadata.
	Metadata map[string]any
}

// ToolCallDelta is a fragment of a tool call as the provider sent it.
type ToolCallDelta struct {
	// Index is the call's position among this turn's calls.
	Index int
	// ID and Name are set on the fragment that first carries them.
	ID   string
	Name string
	// Arguments is a fragment of the call's JSON arguments.
	Arguments string
}
