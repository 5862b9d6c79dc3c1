package react

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

// Summarization keeps the conversation within a token budget: before a model call whose
// conversation counts more than o.MaxTokens, older turns are replaced in the state by one
// summary, as Options.Compaction does (see [conversation.Compact]), but as a middleware whose
// node shows in the graph and whose work shows in the thread's history.
func Summarization(o *conversation.CompactOptions) (Middleware, error) {
	c, err := conversation.NewCompactor(o)
	if err != nil {
		return Middleware{}, fmt.Errorf("react: Summarization: %w", err)
	}
	return Middleware{Name: "summarization", BeforeModel: func(ctx context.Context, s State) (*Update, error) {
		if !c.Over(&model.Request{Messages: s.Messages}) {
			return nil, nil
		}
		out, changed, err := c.Compact(ctx, s.Messages)
		if err != nil || !changed {
			return nil, err
		}
		return &Update{Messages: append([]message.Message{message.RemoveAll()}, out...)}, nil
	}}, nil
}

// DynamicPrompt sets each model call's system prompt from the request (its state, its
// messages), replacing Options.Prompt for that call.
func DynamicPrompt(prompt func(ctx context.Context, req *ModelRequest) (string, error)) Middleware {
	return Middleware{Name: "dynamic_prompt", WrapModel: func(ctx context.Context, req *ModelRequest, next ModelHandler) (*model.Response, error) {
		p, err := prompt(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("react: DynamicPrompt: %w", err)
		}
		req.SystemPrompt = p
		return next(ctx, req)
	}}
}

// ModelFallback answers a model call that failed with each fallback in turn, until one answers.
// A call ended by its context is not retried. The error, when every model failed, holds each
// model's error.
func ModelFallback(fallbacks ...model.Model) Middleware {
	return Middleware{Name: "model_fallback", WrapModel: func(ctx context.Context, req *ModelRequest, next ModelHandler) (*model.Response, error) {
		first := *req
		resp, err := next(ctx, req)
		if err == nil || ctx.Err() != nil {
			return resp, err
		}
		errs := []error{err}
		for _, fb := range fallbacks {
			r := first
			r.Model = fb
			if resp, err = next(ctx, &r); err == nil || ctx.Err() != nil {
				return resp, err
			}
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("react: the model and its %d fallbacks failed: %w", len(fallbacks), errors.Join(errs...))
	}}
}

// ExitBehavior is what a limit middleware does at its limit.
type ExitBehavior string

const (
	// ExitEnd ends the run with an assistant message that says which limit was reached (the
	// default of ModelCallLimit).
	ExitEnd ExitBehavior = "end"
	// ExitError fails the run with an error wrapping [ErrLimit].
	ExitError ExitBehavior = "error"
	// ExitContinue answers the calls over the limit with an error result the model reads, and
	// lets the others run (the default of ToolCallLimit; ModelCallLimit does not take it).
	ExitContinue ExitBehavior = "continue"
)

// CallLimit bounds calls per thread (over every run of the conversation) and per run (one
// invocation); zero means no bound.
type CallLimit struct {
	ThreadLimit, RunLimit int
	Exit                  ExitBehavior
}

func (l CallLimit) check(name string) error {
	if l.ThreadLimit < 0 || l.RunLimit < 0 {
		return fmt.Errorf("react: %s: limits must not be negative (thread %d, run %d)", name, l.ThreadLimit, l.RunLimit)
	}
	if l.ThreadLimit == 0 && l.RunLimit == 0 {
		return fmt.Errorf("react: %s: set ThreadLimit, RunLimit or both", name)
	}
	return nil
}

// remaining is how many more calls the limits allow, given the counts so far.
func (l CallLimit) remaining(thread, run int) int {
	left := -1
	if l.ThreadLimit > 0 {
		left = max(l.ThreadLimit-thread, 0)
	}
	if l.RunLimit > 0 && (left < 0 || l.RunLimit-run < left) {
		left = max(l.RunLimit-run, 0)
	}
	return left
}

// ModelCallLimit stops the agent after a number of model calls per thread or per run: at the
// limit it ends the run with a message (ExitEnd, the default) or fails it (ExitError). Its counts
// are kept in State.Extra under "model_call_limit.thread" and "model_call_limit.run".
func ModelCallLimit(l CallLimit) (Middleware, error) {
	const name, threadKey, runKey = "model_call_limit", "model_call_limit.thread", "model_call_limit.run"
	if err := l.check("ModelCallLimit"); err != nil {
		return Middleware{}, err
	}
	l.Exit = cmp.Or(l.Exit, ExitEnd)
	if l.Exit == ExitContinue {
		return Middleware{}, errors.New("react: ModelCallLimit: ExitContinue is for tool calls; use ExitEnd or ExitError")
	}
	return Middleware{
		Name: name,
		BeforeAgent: func(context.Context, State) (*Update, error) {
			return &Update{Extra: map[string]any{runKey: 0}}, nil
		},
		BeforeModel: func(_ context.Context, s State) (*Update, error) {
			thread, _ := ExtraValue[int](s, threadKey)
			run, _ := ExtraValue[int](s, runKey)
			if l.remaining(thread, run) != 0 {
				return nil, nil
			}
			why := fmt.Sprintf("the model-call limit was reached (%d calls in this conversation, %d in this run)", thread, run)
			if l.Exit == ExitError {
				return nil, fmt.Errorf("%w: %s", ErrLimit, why)
			}
			return &Update{Messages: []message.Message{message.Assistant("I stopped: " + why + ".")}, Jump: JumpEnd}, nil
		},
		AfterModel: func(_ context.Context, s State) (*Update, error) {
			thread, _ := ExtraValue[int](s, threadKey)
			run, _ := ExtraValue[int](s, runKey)
			return &Update{Extra: map[string]any{threadKey: thread + 1, runKey: run + 1}}, nil
		},
	}, nil
}

// ToolCallLimit bounds the calls of one tool (or of every tool when toolName is "") per thread
// or per run. Calls over the limit are answered with an error result and not run
// (ExitContinue, the default), or end the run (ExitEnd) or fail it (ExitError). Its counts are
// kept in State.Extra under "<name>.thread" and "<name>.run", where the middleware's name is
// "tool_call_limit" or "tool_call_limit.<tool>".
func ToolCallLimit(toolName string, l CallLimit) (Middleware, error) {
	name := "tool_call_limit"
	if toolName != "" {
		name += "." + toolName
	}
	threadKey, runKey := name+".thread", name+".run"
	if err := l.check("ToolCallLimit"); err != nil {
		return Middleware{}, err
	}
	l.Exit = cmp.Or(l.Exit, ExitContinue)
	counted := func(c message.ToolCall) bool { return toolName == "" || c.Name == toolName }
	return Middleware{
		Name: name,
		BeforeAgent: func(context.Context, State) (*Update, error) {
			return &Update{Extra: map[string]any{runKey: 0}}, nil
		},
		AfterModel: func(_ context.Context, s State) (*Update, error) {
			thread, _ := ExtraValue[int](s, threadKey)
			run, _ := ExtraValue[int](s, runKey)
			left := l.remaining(thread, run)
			var allowed int
			var blocked []message.ToolCall
			pending := pendingCalls(s.Messages)
			for _, c := range pending {
				switch {
				case !counted(c):
				case left < 0 || allowed < left:
					allowed++
				default:
					blocked = append(blocked, c)
				}
			}
			u := &Update{Extra: map[string]any{threadKey: thread + allowed, runKey: run + allowed}}
			if len(blocked) == 0 {
				return u, nil
			}
			what := "tool calls"
			if toolName != "" {
				what = "calls of " + toolName
			}
			why := fmt.Sprintf("the limit of %s was reached (thread limit %d, run limit %d; 0 means none)", what, l.ThreadLimit, l.RunLimit)
			switch l.Exit {
			case ExitError:
				return nil, fmt.Errorf("%w: %s", ErrLimit, why)
			case ExitEnd:
				for _, c := range pending { // nothing of this turn runs: every call gets its answer
					u.Messages = append(u.Messages, message.ToolError(c.ID, c.Name, "Not run: "+why+"."))
				}
				u.Messages = append(u.Messages, message.Assistant("I stopped: "+why+"."))
				u.Jump = JumpEnd
				u.Extra = map[string]any{threadKey: thread, runKey: run}
			default:
				for _, c := range blocked {
					u.Messages = append(u.Messages, message.ToolError(c.ID, c.Name, "Not run: "+why+". Answer with what you have."))
				}
			}
			return u, nil
		},
	}, nil
}

// ToolRetryOptions configure [ToolRetry]. Zero values are the documented defaults.
type ToolRetryOptions struct {
	// MaxRetries is how many times a failed call is tried again; zero means 2.
	MaxRetries int
	// Tools lists the tools retried; empty means every tool.
	Tools []string
	// RetryOn says whether an outcome is worth another try; nil retries calls that failed in the
	// tool (an error, a panic, a timeout: a *tool.CallError), not calls with bad arguments.
	RetryOn func(tool.Outcome) bool
	// Backoff is the wait before the first retry, doubled before each next one up to MaxBackoff;
	// zero means one second, and a MaxBackoff of zero means a minute.
	Backoff, MaxBackoff time.Duration
}

// ToolRetry runs a failed tool call again, with exponential backoff, up to o.MaxRetries times;
// the last outcome is what the model reads.
func ToolRetry(o *ToolRetryOptions) Middleware {
	var opts ToolRetryOptions
	if o != nil {
		opts = *o
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 2
	}
	opts.Backoff = cmp.Or(opts.Backoff, time.Second)
	opts.MaxBackoff = cmp.Or(opts.MaxBackoff, time.Minute)
	if opts.RetryOn == nil {
		opts.RetryOn = func(o tool.Outcome) bool {
			var ce *tool.CallError
			return errors.As(o.Err, &ce)
		}
	}
	return Middleware{Name: "tool_retry", WrapTool: func(ctx context.Context, req *ToolRequest, next ToolHandler) (tool.Outcome, error) {
		out, err := next(ctx, req)
		if len(opts.Tools) > 0 && !slices.Contains(opts.Tools, req.Call.Name) {
			return out, err
		}
		wait := opts.Backoff
		for try := 0; try < opts.MaxRetries && err == nil && opts.RetryOn(out); try++ {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return out, nil
			case <-t.C:
			}
			wait = min(2*wait, opts.MaxBackoff)
			out, err = next(ctx, req)
		}
		return out, err
	}}
}

// PIIPatterns are the shapes of personal data [Redact] hides by default: e-mail addresses,
// payment card numbers, IPv4 addresses and international phone numbers.
func PIIPatterns() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`),
		regexp.MustCompile(`\b(?:\d[ -]?){12,18}\d\b`),
		regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`),
		regexp.MustCompile(`\+\d{1,3}[ .-]?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){2,4}\b`),
	}
}

// RedactOptions configure [Redact].
type RedactOptions struct {
	// Redactor hides what it knows (tool.NewRedactor: exact secrets, patterns, credential
	// shapes); nil means one with PIIPatterns and the built-in credential shapes.
	Redactor *tool.Redactor
	// Input rewrites the user's messages in the state before each model call, so personal data
	// is neither sent to the model nor kept. Output rewrites the model's answers in the state
	// (the tokens already streamed are not recalled). ToolResults rewrites tool results before
	// the model reads them. All false means Input and ToolResults.
	Input, Output, ToolResults bool
}

// Redact hides personal data and secrets in the conversation, on the tool package's redactor
// (the one the sanitizer uses): in what the user writes, what tools return and, when asked,
// what the model answers.
func Redact(o *RedactOptions) (Middleware, error) {
	var opts RedactOptions
	if o != nil {
		opts = *o
	}
	if !opts.Input && !opts.Output && !opts.ToolResults {
		opts.Input, opts.ToolResults = true, true
	}
	if opts.Redactor == nil {
		r, err := tool.NewRedactor(&tool.RedactOptions{Patterns: PIIPatterns()})
		if err != nil {
			return Middleware{}, fmt.Errorf("react: Redact: %w", err)
		}
		opts.Redactor = r
	}
	r := opts.Redactor
	rewrite := func(msgs []message.Message, role message.Role) *Update {
		var changed []message.Message
		for _, m := range msgs {
			if m.Role != role {
				continue
			}
			if text := r.Redact(m.Content); text != m.Content {
				m.Content = text
				changed = append(changed, m) // same ID: replaces the message in place
			}
		}
		if len(changed) == 0 {
			return nil
		}
		return &Update{Messages: changed}
	}
	mw := Middleware{Name: "redact"}
	if opts.Input {
		mw.BeforeModel = func(_ context.Context, s State) (*Update, error) {
			return rewrite(s.Messages, message.RoleUser), nil
		}
	}
	if opts.Output {
		mw.AfterModel = func(_ context.Context, s State) (*Update, error) {
			if n := len(s.Messages); n > 0 {
				return rewrite(s.Messages[n-1:], message.RoleAssistant), nil
			}
			return nil, nil
		}
	}
	if opts.ToolResults {
		mw.WrapTool = func(ctx context.Context, req *ToolRequest, next ToolHandler) (tool.Outcome, error) {
			out, err := next(ctx, req)
			out.Message.Content = r.Redact(out.Message.Content)
			if out.Result != nil {
				res := *out.Result
				res.Content = r.Redact(res.Content)
				if len(res.Structured) > 0 {
					// A redaction that broke the JSON (a number hidden) drops it: the text stays.
					if red := r.Redact(string(res.Structured)); json.Valid([]byte(red)) {
						res.Structured = json.RawMessage(red)
					} else {
						res.Structured = nil
					}
				}
				out.Result = &res
			}
			return out, err
		}
	}
	return mw, nil
}
