package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/apps/vesper/app"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/tool"
)

// Path is where the handler is mounted.
const Path = "/ws/v1/chat"

// ErrNoSession is returned for a session_id that does not exist for the caller.
var ErrNoSession = errors.New("chat: no such session for this user; leave session_id out to start a new one")

// ErrUnauthorized is returned by an Authenticate function for a bad token.
var ErrUnauthorized = errors.New("chat: invalid or missing token")

// Principal is who a token stands for.
type Principal struct {
	Tenant, User string
	Permissions  []string
}

// Handler serves the WebSocket chat of the specification's §20:
// chat.message in; chat.thinking, chat.token, chat.complete and error out.
type Handler struct {
	// App is the graph. Required.
	App *app.App
	// Records keeps sessions, messages and summaries. Required.
	Records *Records
	// Linker makes the deep links of chat.complete; nil means none.
	Linker *reports.Linker
	// Authenticate turns the ?token= value into a principal. Required.
	Authenticate func(ctx context.Context, token string) (Principal, error)
	// Model writes session titles and conversation summaries; nil means the offline model.
	Model model.Model
	// CompressAt is how many messages past the last summary trigger a new
	// summary; zero means 30.
	CompressAt int
	// Log records failures; nil means slog.Default().
	Log *slog.Logger
	// RunOptions, when set, adds options to each turn's run; a graph compiled with a checkpoint
	// saver needs a thread per run (the history comes from Records, so a fresh one each turn).
	RunOptions func(session string) []graph.RunOption
}

// In is a client frame.
type In struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// Out is a server frame.
type Out struct {
	Type      string             `json:"type"`
	Token     string             `json:"token,omitempty"`
	SessionID string             `json:"session_id,omitempty"`
	Content   string             `json:"content,omitempty"`
	Intent    string             `json:"intent,omitempty"`
	Agents    []string           `json:"agents_used,omitempty"`
	Links     []reports.DeepLink `json:"pbi_deep_links,omitempty"`
	Charts    any                `json:"charts,omitempty"`
	LatencyMS int                `json:"latency_ms,omitempty"`
	Code      string             `json:"code,omitempty"`
	Message   string             `json:"message,omitempty"`
}

func (h *Handler) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.Default()
}

func (h *Handler) model() model.Model {
	if h.Model != nil {
		return h.Model
	}
	return offline.New(nil)
}

// ServeHTTP authenticates the token, then upgrades and serves the session.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, err := h.Authenticate(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		http.Error(w, "chat: "+err.Error()+"; pass a valid token as ?token=", http.StatusUnauthorized)
		return
	}
	session, err := h.Records.Session(r.Context(), r.URL.Query().Get("session_id"), p.Tenant, p.User)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, ErrNoSession) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := r.Context()
	send := func(o Out) error {
		b, _ := json.Marshal(o)
		return c.Write(ctx, websocket.MessageText, b)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var in In
		if err := json.Unmarshal(data, &in); err != nil {
			_ = send(Out{Type: "error", Code: "bad_frame", Message: "chat: the frame is not JSON: " + err.Error() + `; send {"type": "chat.message", "content": "..."}`})
			continue
		}
		if in.Type != "chat.message" {
			_ = send(Out{Type: "error", Code: "bad_type", Message: fmt.Sprintf(`chat: unknown frame type %q; send {"type": "chat.message", "content": "..."}`, in.Type)})
			continue
		}
		if strings.TrimSpace(in.Content) == "" {
			_ = send(Out{Type: "error", Code: "empty", Message: "chat: the message is empty; put the question in content"})
			continue
		}
		if err := h.turn(ctx, send, p, session, in.Content); err != nil {
			h.log().Warn("vesper chat turn failed", "session", session, "err", err)
			if send(Out{Type: "error", Code: "failed", SessionID: session, Message: "Sorry, that question could not be answered: " + err.Error()}) != nil {
				return
			}
		}
	}
}

// turn answers one message: history from the records, the graph streamed,
// the records written, long sessions compressed.
func (h *Handler) turn(ctx context.Context, send func(Out) error, p Principal, session, text string) error {
	start := time.Now()
	if err := send(Out{Type: "chat.thinking", SessionID: session}); err != nil {
		return err
	}
	summary, through, err := h.Records.Summary(ctx, session)
	if err != nil {
		return err
	}
	past, err := h.Records.Messages(ctx, session, through)
	if err != nil {
		return err
	}
	var msgs []message.Message
	for _, m := range past {
		if m.Role == "user" {
			msgs = append(msgs, message.User(m.Content))
		} else {
			msgs = append(msgs, message.Assistant(m.Content))
		}
	}
	msgs = append(msgs, message.User(text))
	userID, err := h.Records.Add(ctx, Message{SessionID: session, Tenant: p.Tenant, Role: "user", Content: text})
	if err != nil {
		return err
	}
	if len(past) == 0 && through == 0 {
		if title, err := agent.Title(ctx, h.model(), msgs); err == nil && title != "" {
			_ = h.Records.SetTitleOnce(ctx, session, title)
		}
	}
	rctx := tool.WithCallInfo(ctx, tool.CallInfo{Tenant: p.Tenant, User: p.User, Permissions: p.Permissions, ThreadID: session})
	var final agent.SupervisorState
	var got bool
	opts := []graph.RunOption{graph.WithStreamModes(graph.ModeMessages, graph.ModeValues)}
	if h.RunOptions != nil {
		opts = append(opts, h.RunOptions(session)...)
	}
	for ev, err := range h.App.Graph.Stream(rctx, agent.SupervisorState{Messages: msgs, Summary: summary}, opts...) {
		if err != nil {
			return err
		}
		switch ev.Mode {
		case graph.ModeMessages:
			if ch, ok := ev.Data.(graph.MessageChunk); ok && ch.Message.Content != "" && len(ev.NS) == 0 {
				if err := send(Out{Type: "chat.token", Token: ch.Message.Content}); err != nil {
					return err
				}
			}
		case graph.ModeValues:
			if st, ok := ev.Data.(agent.SupervisorState); ok {
				final, got = st, true
			}
		}
	}
	if !got {
		return errors.New("chat: the graph ended without a state")
	}
	out := h.App.Outcome(final)
	var links []reports.DeepLink
	if h.Linker != nil && len(out.ReportKeys) > 0 {
		links = h.Linker.Links(ctx, p.Tenant, out.ReportKeys)
	}
	latency := int(time.Since(start).Milliseconds())
	calls, _ := json.Marshal(out.ToolCalls)
	linkJSON, _ := json.Marshal(links)
	if _, err := h.Records.Add(ctx, Message{SessionID: session, Tenant: p.Tenant, Role: "assistant", Content: final.Answer, Intent: out.Intent,
		AgentsUsed: out.Agents, ToolCalls: calls, DeepLinks: linkJSON, TokenCount: tokens(text) + tokens(final.Answer), LatencyMS: latency}); err != nil {
		return err
	}
	if err := send(Out{Type: "chat.complete", SessionID: session, Content: final.Answer, Intent: out.Intent, Agents: out.Agents,
		Links: links, Charts: out.Charts, LatencyMS: latency}); err != nil {
		return err
	}
	_ = userID
	return h.compress(ctx, session, summary, through)
}

// compress folds the messages past the last summary into a new summary
// once there are CompressAt of them.
func (h *Handler) compress(ctx context.Context, session, previous string, through int64) error {
	at := h.CompressAt
	if at == 0 {
		at = 30
	}
	msgs, err := h.Records.Messages(ctx, session, through)
	if err != nil || len(msgs) < at {
		return err
	}
	var conv []message.Message
	for _, m := range msgs {
		if m.Role == "user" {
			conv = append(conv, message.User(m.Content))
		} else {
			conv = append(conv, message.Assistant(m.Content))
		}
	}
	text, err := agent.Summarize(ctx, h.model(), previous, conv)
	if err != nil {
		return fmt.Errorf("chat: summarising the session: %w", err)
	}
	return h.Records.AddSummary(ctx, session, text, msgs[len(msgs)-1].ID)
}

// tokens estimates a text's tokens (four characters a token).
func tokens(s string) int { return (len(s) + 3) / 4 }
