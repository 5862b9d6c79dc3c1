// Package anthropic is the trellis chat model for Anthropic's Messages API, built on the official
// anthropic-sdk-go.
//
//	m, err := anthropic.New("claude-sonnet-4-5", &anthropic.Options{APIKey: os.Getenv("ANTHROPIC_API_KEY")})
//
// System messages become the request's system prompt; consecutive tool results are sent together
// in one user turn, as the API requires; image parts become image blocks. Structured output is
// asked for with a tool named after the schema that the model is made to call, which every Claude
// model supports; its input is returned as the reply's JSON text. The SDK retries 408, 409, 429
// and 5xx answers with backoff, honouring Retry-After. A prompt that is too long fails with an
// error that matches model.ErrContextWindowExceeded.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// DefaultMaxTokens is the reply cap sent when a Request sets none; the API requires one.
const DefaultMaxTokens = 4096

// Options configures a Model. Model and APIKey are required; every other zero value is a
// documented default.
type Options struct {
	// APIKey is sent as x-api-key.
	APIKey string
	// BaseURL is the API root (without /v1); "" means https://api.anthropic.com.
	BaseURL string
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

// Model is a Claude model. It is safe for concurrent use.
type Model struct {
	client sdk.Client
	name   string
}

var (
	_ model.Model      = (*Model)(nil)
	_ model.Identified = (*Model)(nil)
)

// Identity returns "anthropic" and the model's name.
func (m *Model) Identity() (provider, name string) { return "anthropic", m.name }

// New returns the model called name (e.g. "claude-sonnet-4-5"), or an error naming what is
// missing. Nil opts, like a zero field, means the documented default.
func New(name string, opts *Options) (*Model, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	opts = &o
	if strings.TrimSpace(name) == "" {
		return nil, &model.ConfigError{Setting: "anthropic.New's model name", Problem: "is empty", Hint: "name a model such as claude-sonnet-4-5"}
	}
	if opts.APIKey == "" {
		return nil, &model.ConfigError{Setting: "ANTHROPIC_API_KEY", Problem: "is not set", Hint: "export ANTHROPIC_API_KEY, or choose another provider in TRELLIS_MODEL", Err: model.ErrMissingKey}
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
	ro := []option.RequestOption{option.WithAPIKey(opts.APIKey), option.WithMaxRetries(retries), option.WithRequestTimeout(timeout)}
	if opts.BaseURL != "" {
		ro = append(ro, option.WithBaseURL(opts.BaseURL))
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = model.NewHTTPClient(opts.ConnectTimeout)
	}
	ro = append(ro, option.WithHTTPClient(hc))
	return &Model{client: sdk.NewClient(ro...), name: name}, nil
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

// Stream streams the turn. Tool calls are yielded whole when their block ends. For a request with
// a Schema, the forced output tool's JSON arrives as text deltas.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if err := req.Validate(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		params, outputTool, err := m.params(req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		stream := m.client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		var (
			text     strings.Builder
			calls    model.CallAssembler
			usage    model.Usage
			finish   model.FinishReason
			blockIdx = map[int64]int{}  // content block index -> tool call index
			output   = map[int64]bool{} // blocks that carry the structured output
		)
		emit := func(c model.Chunk) bool { return yield(c, nil) }
		for stream.Next() {
			ev := stream.Current()
			switch ev.Type {
			case "message_start":
				usage.InputTokens = int(ev.Message.Usage.InputTokens + ev.Message.Usage.CacheReadInputTokens + ev.Message.Usage.CacheCreationInputTokens)
				usage.OutputTokens = int(ev.Message.Usage.OutputTokens)
			case "content_block_start":
				if ev.ContentBlock.Type == "tool_use" {
					if outputTool != "" && ev.ContentBlock.Name == outputTool {
						output[ev.Index] = true
						continue
					}
					i := len(blockIdx)
					blockIdx[ev.Index] = i
					d := model.ToolCallDelta{Index: i, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}
					calls.Add(d)
					if !emit(model.Chunk{ToolCallDelta: &d}) {
						return
					}
				}
			case "content_block_delta":
				switch ev.Delta.Type {
				case "text_delta":
					if ev.Delta.Text != "" {
						text.WriteString(ev.Delta.Text)
						if !emit(model.Chunk{Text: ev.Delta.Text}) {
							return
						}
					}
				case "input_json_delta":
					if output[ev.Index] {
						text.WriteString(ev.Delta.PartialJSON)
						if ev.Delta.PartialJSON != "" && !emit(model.Chunk{Text: ev.Delta.PartialJSON}) {
							return
						}
						continue
					}
					if i, ok := blockIdx[ev.Index]; ok {
						d := model.ToolCallDelta{Index: i, Arguments: ev.Delta.PartialJSON}
						calls.Add(d)
						if !emit(model.Chunk{ToolCallDelta: &d}) {
							return
						}
					}
				}
			case "message_delta":
				if ev.Usage.OutputTokens > 0 {
					usage.OutputTokens = int(ev.Usage.OutputTokens)
				}
				if ev.Delta.StopReason != "" {
					if ev.Delta.StopReason == sdk.StopReasonModelContextWindowExceeded {
						yield(model.Chunk{}, &model.ProviderError{Provider: "anthropic", Model: m.name, Partial: text.String(), Err: model.ErrContextWindowExceeded})
						return
					}
					finish = stopReason(ev.Delta.StopReason)
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(model.Chunk{}, m.wrap(err, text.String()))
			return
		}
		for _, tc := range calls.Finish() {
			if !emit(model.Chunk{ToolCall: &tc}) {
				return
			}
		}
		if finish == "" || (outputTool != "" && finish == model.FinishToolCalls && len(blockIdx) == 0) {
			finish = model.FinishStop
		}
		u := usage
		yield(model.Chunk{Usage: &u, FinishReason: finish, Metadata: map[string]any{"provider": "anthropic", "model": m.name}}, nil)
	}
}

func stopReason(s sdk.StopReason) model.FinishReason {
	switch s {
	case sdk.StopReasonMaxTokens:
		return model.FinishLength
	case sdk.StopReasonToolUse:
		return model.FinishToolCalls
	case sdk.StopReasonRefusal:
		return model.FinishContentFilter
	}
	return model.FinishStop
}

func (m *Model) wrap(err error, partial string) error {
	pe := &model.ProviderError{Provider: "anthropic", Model: m.name, Partial: partial, Err: err}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		pe.StatusCode = apiErr.StatusCode
		var body struct {
			Error struct{ Type, Message string }
		}
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
		msg := body.Error.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		low := strings.ToLower(msg)
		if strings.Contains(low, "prompt is too long") || strings.Contains(low, "context window") || strings.Contains(low, "context length") {
			pe.Err = fmt.Errorf("%w: %s", model.ErrContextWindowExceeded, msg)
		} else {
			pe.Err = fmt.Errorf("%s (%s)", msg, body.Error.Type)
		}
	}
	return pe
}

// params builds the SDK request. outputTool names the forced structured-output tool, if any.
func (m *Model) params(req *model.Request) (sdk.MessageNewParams, string, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.name), MaxTokens: DefaultMaxTokens}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(min(*req.Temperature, 1))
	}
	p.StopSequences = req.Stop
	var pendingResults []sdk.ContentBlockParamUnion
	flush := func() {
		if len(pendingResults) > 0 {
			p.Messages = append(p.Messages, sdk.NewUserMessage(pendingResults...))
			pendingResults = nil
		}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case message.RoleSystem:
			p.System = append(p.System, sdk.TextBlockParam{Text: msg.Text()})
		case message.RoleTool:
			pendingResults = append(pendingResults, sdk.NewToolResultBlock(msg.ToolCallID, msg.Text(), msg.IsError))
		case message.RoleAssistant:
			flush()
			var blocks []sdk.ContentBlockParamUnion
			if t := msg.Text(); t != "" {
				blocks = append(blocks, sdk.NewTextBlock(t))
			}
			for _, tc := range msg.ToolCalls {
				var input any = map[string]any{}
				if len(tc.Arguments) > 0 {
					var v any
					if json.Unmarshal(tc.Arguments, &v) == nil {
						if _, isObj := v.(map[string]any); isObj {
							input = v
						}
					}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			if len(blocks) > 0 {
				p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
			}
		default:
			flush()
			var blocks []sdk.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(msg.Content))
			}
			for _, part := range msg.Parts {
				switch part.Type {
				case message.PartText:
					blocks = append(blocks, sdk.NewTextBlock(part.Text))
				case message.PartImage:
					blocks = append(blocks, imageBlock(part))
				}
			}
			if len(blocks) == 0 {
				blocks = append(blocks, sdk.NewTextBlock(""))
			}
			p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
		}
	}
	flush()
	if len(p.Messages) == 0 {
		return p, "", &model.RequestError{Field: "Messages", Problem: "holds only system messages", Hint: "Anthropic needs at least one user message"}
	}
	for i, t := range req.Tools {
		tp, err := toolParam(t.Name, t.Description, t.Parameters)
		if err != nil {
			return p, "", &model.RequestError{Field: fmt.Sprintf("Tools[%d].Parameters", i), Problem: err.Error()}
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	outputTool := ""
	if req.Schema != nil {
		outputTool = req.Schema.SchemaName()
		desc := req.Schema.Description
		if desc == "" {
			desc = "Give the answer as the input of this tool."
		}
		tp, err := toolParam(outputTool, desc, req.Schema.JSON)
		if err != nil {
			return p, "", &model.RequestError{Field: "Schema.JSON", Problem: err.Error()}
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
		p.ToolChoice = sdk.ToolChoiceParamOfTool(outputTool)
		return p, outputTool, nil
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case model.ToolChoiceAuto:
		case model.ToolChoiceNone:
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
		case model.ToolChoiceRequired:
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
		default:
			p.ToolChoice = sdk.ToolChoiceParamOfTool(req.ToolChoice)
		}
	}
	return p, "", nil
}

func toolParam(name, desc string, raw json.RawMessage) (*sdk.ToolParam, error) {
	schema := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, err
		}
	}
	in := sdk.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
	if in.Properties == nil {
		in.Properties = map[string]any{}
	}
	for _, r := range asSlice(schema["required"]) {
		if s, ok := r.(string); ok {
			in.Required = append(in.Required, s)
		}
	}
	for k, v := range schema {
		if k != "properties" && k != "required" && k != "type" {
			in.ExtraFields[k] = v
		}
	}
	tp := &sdk.ToolParam{Name: name, InputSchema: in}
	if desc != "" {
		tp.Description = sdk.String(desc)
	}
	return tp, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func imageBlock(p message.Part) sdk.ContentBlockParamUnion {
	u := p.ImageURL
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return sdk.NewImageBlock(sdk.URLImageSourceParam{URL: u})
	}
	mt, data := p.MIMEType, u
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		if meta, payload, ok := strings.Cut(rest, ","); ok {
			mt, data = strings.TrimSuffix(meta, ";base64"), payload
		}
	}
	if mt == "" {
		mt = "image/png"
	}
	return sdk.NewImageBlockBase64(mt, data)
}
