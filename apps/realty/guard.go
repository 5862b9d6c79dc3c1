package realty

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"strings"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool/sanitize"
)

// guard is the last step before any model request leaves the app: every text is sanitized (the
// app's secrets and the credential shapes become [REDACTED]), and text that came from outside
// (anything carrying the external-data label, and the recap compaction writes from tool
// results) never travels as a system message: it goes in a user message, inside the label.
// The main model (through the agent's loop middleware) and the fast model (scoring, summaries, compaction,
// titles, hints) both sit behind it.
type guard struct {
	inner model.Model
	san   *sanitize.Sanitizer
}

func (g *guard) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return g.inner.Generate(ctx, guardRequest(g.san, req))
}

func (g *guard) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return g.inner.Stream(ctx, guardRequest(g.san, req))
}

// Identity passes on the inner model's names, so the offline model is still recognised.
func (g *guard) Identity() (provider, name string) {
	if id, ok := g.inner.(model.Identified); ok {
		return id.Identity()
	}
	return "", ""
}

// isExternal reports a message whose text came from outside the user and the app.
func isExternal(m message.Message) bool {
	return m.Metadata[conversation.MetaSummary] != nil || strings.Contains(m.Text(), sanitize.Label)
}

// guardRequest returns a copy of req with every message sanitized and external text moved out
// of system messages into labelled user messages.
func guardRequest(san *sanitize.Sanitizer, req *model.Request) *model.Request {
	r := *req
	r.Messages = make([]message.Message, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = san.Sanitize(m.Content)
		if len(m.Parts) > 0 {
			parts := make([]message.Part, len(m.Parts))
			for j, p := range m.Parts {
				p.Text = san.Sanitize(p.Text)
				parts[j] = p
			}
			m.Parts = parts
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]message.ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.Arguments = []byte(san.Sanitize(string(c.Arguments)))
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		if m.Role == message.RoleSystem && isExternal(m) {
			m.Role = message.RoleUser
			if !strings.HasPrefix(m.Content, sanitize.Label) {
				m.Content = sanitize.Label + "\n" + strings.ReplaceAll(m.Content, sanitize.Label+"\n", "")
			}
		}
		r.Messages[i] = m
	}
	return &r
}

// redactingHandler sanitizes a log record's message and attributes before the server's handler
// writes them: an error that quotes an upstream answer cannot carry a key into the log.
type redactingHandler struct {
	inner slog.Handler
	san   *sanitize.Sanitizer
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.san.Sanitize(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		as := make([]any, len(g))
		for i, x := range g {
			as[i] = h.attr(x)
		}
		return slog.Group(a.Key, as...)
	case slog.KindString:
		return slog.String(a.Key, h.san.Sanitize(v.String()))
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.san.Sanitize(err.Error()))
		}
		return slog.String(a.Key, h.san.Sanitize(fmt.Sprint(v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return &redactingHandler{inner: h.inner.WithAttrs(out), san: h.san}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{inner: h.inner.WithGroup(name), san: h.san}
}
