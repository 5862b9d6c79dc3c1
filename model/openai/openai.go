// Package openai is the trellis chat model for OpenAI's Chat Completions API and for any server
// that speaks it (Ollama, vLLM, llama.cpp server, LiteLLM proxy), built on the official
// openai-go SDK.
//
//	m, err := openai.New("gpt-4o", &openai.Options{APIKey: os.Getenv("OPENAI_API_KEY")})
//	resp, err := m.Generate(ctx, &model.Request{Messages: msgs, Tools: tools})
//
// Both Generate and Stream use the streaming endpoint, so both get the same tool-call assembly,
// usage reporting (stream_options.include_usage) and partial-text errors. The SDK retries 408,
// 409, 429 and 5xx answers and connection errors with exponential backoff, honouring
// Retry-After and Retry-After-Ms. A request whose conversation is too long fails with an error
// that matches model.ErrContextWindowExceeded.
//
// The request goes through the SDK's client (parameters, authentication, retries, error
// decoding) and its SSE decoder; each streamed event is then decoded into a small struct holding
// only the fields trellis uses, which keeps the time added per streamed token to a few
// microseconds (see bench/modelbench).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Options configures a Model. Model is required; every other zero value is a documented default.
type Options struct {
	// APIKey is sent as a bearer token. Required when Provider is "openai"; servers such as
	// Ollama accept any value, and "" sends none.
	APIKey string
	// BaseURL is the API root including /v1; "" means https://api.openai.com/v1.
	BaseURL string
	// Provider names the service in metadata and errors; "" means "openai". Any other name
	// (such as "openai-compatible") also switches max tokens to the older max_tokens field,
	// which compatible servers understand.
	Provider string
	// MaxRetries is how many times a failed attempt is retried; 0 means 2, negative means none.
	MaxRetries int
	// Timeout bounds each attempt; 0 means 10 minutes.
	Timeout time.Duration
	// ConnectTimeout bounds opening a connection to the API (dialling and the TLS handshake);
	// 0 means model.DefaultConnectTimeout (5 s). Ignored when HTTPClient is set.
	ConnectTimeout time.Duration
	// HTTPClient replaces the default client, for proxies or tests.
	HTTPClient *http.Client
}

// Model is a chat model served over the Chat Completions API. It is safe for concurrent use.
type Model struct {
	client   sdk.Client
	name     string
	provider string
}

var (
	_ model.Model      = (*Model)(nil)
	_ model.Identified = (*Model)(nil)
)

// Identity returns the provider's name ("openai" unless Options.Provider named another) and the
// model's.
func (m *Model) Identity() (provider, name string) { return m.provider, m.name }

// New returns the model called name (e.g. "gpt-4o" or "llama3.1"), or an error naming what is
// missing. Nil opts, like a zero field, means the documented default.
func New(name string, opts *Options) (*Model, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	opts = &o
	if opts.Provider == "" {
		opts.Provider = "openai"
	}
	if strings.TrimSpace(name) == "" {
		return nil, &model.ConfigError{Setting: "openai.New's model name", Problem: "is empty", Hint: "name a model such as gpt-4o"}
	}
	if opts.Provider == "openai" && opts.APIKey == "" {
		return nil, &model.ConfigError{Setting: "OPENAI_API_KEY", Problem: "is not set", Hint: "export OPENAI_API_KEY, or choose another provider in TRELLIS_MODEL", Err: model.ErrMissingKey}
	}
	retries := opts.MaxRetries
	switch {
	case retries == 0:
		retries = 2
	case retries < 0:
		retries = 0
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ro := []option.RequestOption{option.WithMaxRetries(retries), option.WithRequestTimeout(timeout), option.WithAPIKey(opts.APIKey)}
	if opts.BaseURL != "" {
		ro = append(ro, option.WithBaseURL(opts.BaseURL))
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = model.NewHTTPClient(opts.ConnectTimeout)
	}
	ro = append(ro, option.WithHTTPClient(hc))
	return &Model{client: sdk.NewClient(ro...), name: name, provider: opts.Provider}, nil
}

// Generate returns the whole turn; structured output is validated and repaired once.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return model.GenerateStructured(ctx, req, func(ctx context.Context, r *model.Request) (*model.Response, error) {
		return model.Collect(m.Stream(ctx, r))
	})
}

// Stream streams the turn. Tool calls are yielded whole after the text.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if err := req.Validate(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		params, err := m.params(req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		var raw *http.Response
		err = m.client.Post(ctx, "chat/completions", params, &raw, option.WithJSONSet("stream", true))
		if err != nil {
			yield(model.Chunk{}, m.wrap(err, ""))
			return
		}
		stream := ssestream.NewDecoder(raw)
		if stream == nil {
			yield(model.Chunk{}, m.wrap(errors.New("the server sent a response without a body"), ""))
			return
		}
		defer stream.Close()
		var (
			text   strings.Builder
			calls  model.CallAssembler
			usage  *model.Usage
			finish model.FinishReason
			c      wireChunk
			serr   error
		)
		for stream.Next() {
			ev := stream.Event()
			if bytes.HasPrefix(ev.Data, doneMarker) {
				break
			}
			if err := c.decode(ev.Data); err != nil {
				serr = err
				break
			}
			if len(c.Error) > 0 && !bytes.Equal(c.Error, jsonNull) {
				serr = &ssestream.StreamError{Message: "received error while streaming: " + errorText(c.Error), Event: ev}
				break
			}
			if c.Usage != nil && (c.Usage.PromptTokens > 0 || c.Usage.CompletionTokens > 0) {
				usage = &model.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
			}
			for i := range c.Choices {
				ch := &c.Choices[i]
				if ch.Index != 0 {
					continue
				}
				if d := ch.Delta.Content; d != "" {
					text.WriteString(d)
					if !yield(model.Chunk{Text: d}, nil) {
						return
					}
				}
				for _, tc := range ch.Delta.ToolCalls {
					d := model.ToolCallDelta{Index: tc.Index, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
					calls.Add(d)
					if !yield(model.Chunk{ToolCallDelta: &d}, nil) {
						return
					}
				}
				if ch.FinishReason != "" {
					finish = finishReason(ch.FinishReason)
				}
			}
		}
		if serr == nil {
			serr = stream.Err()
		}
		if serr == nil && ctx.Err() != nil {
			serr = ctx.Err()
		}
		if serr != nil {
			yield(model.Chunk{}, m.wrap(serr, text.String()))
			return
		}
		for _, tc := range calls.Finish() {
			if !yield(model.Chunk{ToolCall: &tc}, nil) {
				return
			}
		}
		if finish == "" {
			finish = model.FinishStop
		}
		yield(model.Chunk{Usage: usage, FinishReason: finish, Metadata: map[string]any{"provider": m.provider, "model": m.name}}, nil)
	}
}

func finishReason(s string) model.FinishReason {
	switch s {
	case "length":
		return model.FinishLength
	case "tool_calls", "function_call":
		return model.FinishToolCalls
	case "content_filter":
		return model.FinishContentFilter
	}
	return model.FinishStop
}

// wrap turns an SDK error into a *model.ProviderError keeping the partial text, and marks
// context-window errors.
func (m *Model) wrap(err error, partial string) error {
	pe := &model.ProviderError{Provider: m.provider, Model: m.name, Partial: partial, Err: err}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		pe.StatusCode = apiErr.StatusCode
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		if apiErr.Code == "context_length_exceeded" || strings.Contains(strings.ToLower(msg), "maximum context length") || strings.Contains(strings.ToLower(msg), "context window") {
			pe.Err = fmt.Errorf("%w: %s", model.ErrContextWindowExceeded, msg)
		} else {
			pe.Err = fmt.Errorf("%s (%s)", msg, apiErr.Type)
		}
	}
	return pe
}

func (m *Model) params(req *model.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.name),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	for _, msg := range req.Messages {
		p.Messages = append(p.Messages, toMessage(msg))
	}
	for i, t := range req.Tools {
		var schema map[string]any
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, &model.RequestError{Field: fmt.Sprintf("Tools[%d].Parameters", i), Problem: err.Error()}
			}
		} else {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fd.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case model.ToolChoiceAuto:
		case model.ToolChoiceNone, model.ToolChoiceRequired:
			p.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt(req.ToolChoice)}
		default:
			p.ToolChoice = sdk.ToolChoiceOptionFunctionToolChoice(sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice})
		}
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if m.provider == "openai" {
			p.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	if len(req.Stop) > 0 {
		p.Stop = sdk.ChatCompletionNewParamsStopUnion{OfStringArray: req.Stop}
	}
	if req.Schema != nil {
		var schema map[string]any
		if err := json.Unmarshal(req.Schema.JSON, &schema); err != nil {
			return p, &model.RequestError{Field: "Schema.JSON", Problem: err.Error()}
		}
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: req.Schema.SchemaName(), Schema: schema}
		if req.Schema.Description != "" {
			js.Description = sdk.String(req.Schema.Description)
		}
		p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
	}
	return p, nil
}

func toMessage(m message.Message) sdk.ChatCompletionMessageParamUnion {
	switch m.Role {
	case message.RoleSystem:
		return sdk.SystemMessage(m.Text())
	case message.RoleTool:
		content := m.Text()
		if m.IsError && !strings.HasPrefix(strings.ToLower(content), "error") {
			content = "Error: " + content
		}
		return sdk.ToolMessage(content, m.ToolCallID)
	case message.RoleAssistant:
		a := sdk.ChatCompletionAssistantMessageParam{}
		if t := m.Text(); t != "" {
			a.Content.OfString = sdk.String(t)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: argsText(tc.Arguments)},
			}})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
	}
	if !hasImage(m) {
		return sdk.UserMessage(m.Text())
	}
	var parts []sdk.ChatCompletionContentPartUnionParam
	if m.Content != "" {
		parts = append(parts, sdk.TextContentPart(m.Content))
	}
	for _, p := range m.Parts {
		switch p.Type {
		case message.PartText:
			parts = append(parts, sdk.TextContentPart(p.Text))
		case message.PartImage:
			parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: ImageURL(p)}))
		}
	}
	return sdk.UserMessage(parts)
}

// argsText returns the arguments as the JSON text a model wrote; a JSON string holding invalid
// JSON (see model.ToolArguments) is unwrapped back to that text.
func argsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

func hasImage(m message.Message) bool {
	for _, p := range m.Parts {
		if p.Type == message.PartImage {
			return true
		}
	}
	return false
}

// ImageURL returns an image part as a URL: http(s) and data: URLs as given, raw base64 as a
// data: URL of its MIMEType (image/png when none is given).
func ImageURL(p message.Part) string {
	u := p.ImageURL
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "data:") {
		return u
	}
	mt := p.MIMEType
	if mt == "" {
		mt = "image/png"
	}
	return "data:" + mt + ";base64," + u
}
