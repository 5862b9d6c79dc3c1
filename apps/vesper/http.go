package vesper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/store"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"
)

// chatPath is where the handler is mounted.
const chatPath = "/ws/v1/chat"

// routes are the app's HTTP routes under /apps/vesper/: the chat WebSocket.
func (o *opened) routes(d server.AppDeps) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+chatPath, o.chat(d))
	return mux
}

// chat is the chat WebSocket on the app's appstream kit: the API's credentials
// (?token=), the Origin check, the tenant's request rate and open streams, heartbeats and write
// deadlines; each turn runs through the server's run machinery.
func (o *opened) chat(d server.AppDeps) http.Handler {
	return &chatHandler{
		App: o.App, Runs: d.Runs, Records: o.Records, Linker: o.Linker, Model: o.Model, Log: d.Logger,
		Kit: appstream.New(d, nil),
		Principal: func(p server.Principal) chatPrincipal {
			// The dev principal's tenant sees the demo tenant, as in the graph.
			tenant := p.Tenant
			if tenant == server.DevPrincipal.Tenant {
				tenant = warehouse.TenantVesper
			}
			return chatPrincipal{Tenant: tenant, User: p.User, Permissions: p.Permissions, Run: p}
		},
	}
}

// chatPrincipal is who a connection acts for: the tenant and user its records belong to, and
// the server principal its runs act as (the same but for the dev mode's alias).
type chatPrincipal struct {
	Tenant, User string
	Permissions  []string
	// Run is the principal the turn's runs act for; its tenant owns the session's thread.
	Run server.Principal
}

// chatHandler serves the WebSocket chat of the specification's §20:
// chat.message in; chat.thinking, chat.token, chat.complete and error out.
// Each session is one thread of the assistant, and each turn one run of it through the
// server's run machinery (queue, limits, budgets, resumable streams, recovery after a crash).
// The connection goes through the app's appstream kit: the API's credentials (?token=), the
// Origin check, the tenant's request rate and open streams (429 before the upgrade), heartbeats
// and a deadline on every write.
type chatHandler struct {
	// App is the graph, for the typed state and outcome of a turn. Required.
	App *assistant
	// Runs runs the turns. Required.
	Runs *server.Runs
	// Assistant is the assistant the turns run; empty means "vesper".
	Assistant string
	// Records keeps sessions, messages and summaries. Required.
	Records *store.Records
	// Linker makes the deep links of chat.complete; nil means none.
	Linker *reports.Linker
	// Kit admits and serves the connections (appstream.New with the app's AppDeps). Required.
	Kit *appstream.Kit
	// Principal makes the chat's principal from the connection's; nil means the same tenant,
	// user and permissions.
	Principal func(server.Principal) chatPrincipal
	// Model writes session titles and conversation summaries; nil means the offline model.
	Model model.Model
	// CompressAt is how many messages past the last summary trigger a new
	// summary; zero means 30.
	CompressAt int
	// Log records failures; nil means slog.Default().
	Log *slog.Logger

	once   sync.Once
	socket http.Handler
}

// chatIn is a client frame.
type chatIn struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// chatOut is a server frame.
type chatOut struct {
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

func (h *chatHandler) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.Default()
}

func (h *chatHandler) model() model.Model {
	if h.Model != nil {
		return h.Model
	}
	return offline.New(&offline.Options{Packs: []*offline.Pack{pack.Pack}})
}

func (h *chatHandler) assistant() string {
	if h.Assistant != "" {
		return h.Assistant
	}
	return "vesper"
}

// ThreadID is the thread that holds a session's conversation.
func threadID(session string) string { return server.ThreadIDFor("vesper", session) }

// ServeHTTP admits the request through the kit, looks up its session (404 for one that is not
// the caller's), then upgrades and serves the session: first the end of a turn a previous
// connection left unfinished (the server restarted, or the client went away), then the
// client's messages.
func (h *chatHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.once.Do(func() { h.socket = h.Kit.Socket(h.open) })
	h.socket.ServeHTTP(w, r)
}

// open runs before the upgrade: the caller's session, or a refusal.
func (h *chatHandler) open(w http.ResponseWriter, r *http.Request, sp server.Principal) func(*appstream.Socket) error {
	p := chatPrincipal{Tenant: sp.Tenant, User: sp.User, Permissions: sp.Permissions, Run: sp}
	if h.Principal != nil {
		p = h.Principal(sp)
	}
	session, err := h.Records.Session(r.Context(), r.URL.Query().Get("session_id"), p.Tenant, p.User)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrNoSession) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return nil
	}
	return func(c *appstream.Socket) error {
		h.serve(c, p, session)
		return nil
	}
}

func (h *chatHandler) serve(c *appstream.Socket, p chatPrincipal, session string) {
	ctx := c.Context()
	send := func(o chatOut) error { return c.SendFrame(o) }
	if err := h.finishPending(ctx, send, p, session); err != nil {
		h.log().Warn("vesper chat: finishing an earlier turn failed", "session", session, "err", err)
		if send(chatOut{Type: "error", Code: "failed", SessionID: session, Message: tools.Fill(pack.Vocabulary.Texts.EarlierTurnFailed, "error", err.Error())}) != nil {
			return
		}
	}
	for {
		data, err := c.Read()
		if err != nil {
			return
		}
		var in chatIn
		if err := json.Unmarshal(data, &in); err != nil {
			_ = send(chatOut{Type: "error", Code: "bad_frame", Message: "chat: the frame is not JSON: " + err.Error() + `; send {"type": "chat.message", "content": "..."}`})
			continue
		}
		if in.Type != "chat.message" {
			_ = send(chatOut{Type: "error", Code: "bad_type", Message: fmt.Sprintf(`chat: unknown frame type %q; send {"type": "chat.message", "content": "..."}`, in.Type)})
			continue
		}
		if strings.TrimSpace(in.Content) == "" {
			_ = send(chatOut{Type: "error", Code: "empty", Message: "chat: the message is empty; put the question in content"})
			continue
		}
		if err := h.turn(ctx, send, p, session, in.Content); err != nil {
			h.log().Warn("vesper chat turn failed", "session", session, "err", err)
			if send(chatOut{Type: "error", Code: "failed", SessionID: session, Message: tools.Fill(pack.Vocabulary.Texts.TurnFailed, "error", err.Error())}) != nil {
				return
			}
		}
	}
}

// runMessageKey is the run metadata naming the user message a turn's run answers.
const runMessageKey = "vesper_message_id"

// turn answers one message: the message recorded, a run of the session's thread started and
// streamed, then the answer recorded and long sessions compressed.
func (h *chatHandler) turn(ctx context.Context, send func(chatOut) error, p chatPrincipal, session, text string) error {
	start := time.Now()
	if err := send(chatOut{Type: "chat.thinking", SessionID: session}); err != nil {
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
	// The thread's messages are the session's since its last summary (earlier ones are in the
	// summary), so a long session stays small; the rest of the thread's state (the last
	// request's filters) carries follow-ups.
	msgs := []message.Message{message.RemoveAll()}
	for _, m := range past {
		if m.Role == "user" {
			msgs = append(msgs, message.User(m.Content))
		} else {
			msgs = append(msgs, message.Assistant(m.Content))
		}
	}
	msgs = append(msgs, message.User(text))
	userID, err := h.Records.Add(ctx, store.Message{SessionID: session, Tenant: p.Tenant, Role: "user", Content: text})
	if err != nil {
		return err
	}
	if len(past) == 0 && through == 0 {
		if title, err := conversation.Title(ctx, h.model(), msgs[1:]); err == nil && title != "" {
			_ = h.Records.SetTitleOnce(ctx, session, title)
		}
	}
	input := map[string]any{"messages": msgs, "conversation_summary": summary}
	run, events, err := h.Runs.Stream(ctx, p.Run, server.RunRequest{AssistantID: h.assistant(), ThreadID: threadID(session), Input: input,
		StreamMode: []string{"messages-tuple"}, MultitaskStrategy: "enqueue",
		Metadata: map[string]any{runMessageKey: strconv.FormatInt(userID, 10), "vesper_session": session}})
	if err != nil {
		return err
	}
	return h.complete(ctx, send, p, session, text, run, events, start, summary, through)
}

// finishPending ends a turn whose answer was never recorded: the session's last message is
// the user's and a run answering it exists (it may still be running, taken up again after a
// restart). It streams the rest of the answer and records it as turn would have.
func (h *chatHandler) finishPending(ctx context.Context, send func(chatOut) error, p chatPrincipal, session string) error {
	summary, through, err := h.Records.Summary(ctx, session)
	if err != nil {
		return err
	}
	past, err := h.Records.Messages(ctx, session, through)
	if err != nil || len(past) == 0 || past[len(past)-1].Role != "user" {
		return err
	}
	last := past[len(past)-1]
	runs, err := h.Runs.List(ctx, p.Run, threadID(session), 1)
	if err != nil || len(runs) == 0 {
		return nil // no thread yet, or no run: the turn never started
	}
	run := runs[0]
	if fmt.Sprint(run.Metadata[runMessageKey]) != strconv.FormatInt(last.ID, 10) || run.Status == server.RunError {
		return nil
	}
	if err := send(chatOut{Type: "chat.thinking", SessionID: session}); err != nil {
		return err
	}
	// The tokens already sent went to the connection that left; send the answer whole.
	events := h.Runs.Follow(ctx, p.Run, run.ThreadID, run.RunID, 1<<62)
	return h.complete(ctx, send, p, session, last.Content, run, events, run.CreatedAt, summary, through)
}

// complete streams a turn's run to its end, then records and sends its answer.
func (h *chatHandler) complete(ctx context.Context, send func(chatOut) error, p chatPrincipal, session, question string, run *server.Run,
	events iter.Seq2[server.RunEvent, error], start time.Time, summary string, through int64) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		switch ev.Event {
		case "messages":
			if tok := ev.ChunkText(); tok != "" {
				if err := send(chatOut{Type: "chat.token", Token: tok}); err != nil {
					return err
				}
			}
		case "error":
			var e struct{ Message string }
			_ = json.Unmarshal(ev.Data, &e)
			return fmt.Errorf("chat: %s", e.Message)
		}
	}
	// The stream may end before the run when the server shuts down: wait for its end.
	if _, err := h.Runs.Wait(ctx, p.Run, run.ThreadID, run.RunID); err != nil {
		return err
	}
	snap, err := h.App.Graph.State(ctx, checkpoint.Ref{ThreadID: run.ThreadID})
	if err != nil {
		return fmt.Errorf("chat: reading the turn's state: %w", err)
	}
	final := snap.Values
	if final.Answer == "" {
		return errors.New("chat: the graph ended without an answer")
	}
	out := h.App.Outcome(final)
	var links []reports.DeepLink
	if h.Linker != nil && len(out.ReportKeys) > 0 {
		links = h.Linker.Links(ctx, p.Tenant, out.ReportKeys)
	}
	latency := int(time.Since(start).Milliseconds())
	calls, _ := json.Marshal(out.ToolCalls)
	linkJSON, _ := json.Marshal(links)
	if _, err := h.Records.Add(ctx, store.Message{SessionID: session, Tenant: p.Tenant, Role: "assistant", Content: final.Answer, Intent: out.Intent,
		AgentsUsed: out.Agents, ToolCalls: calls, DeepLinks: linkJSON, TokenCount: tokenCount(question) + tokenCount(final.Answer), LatencyMS: latency}); err != nil {
		return err
	}
	if err := send(chatOut{Type: "chat.complete", SessionID: session, Content: final.Answer, Intent: out.Intent, Agents: out.Agents,
		Links: links, Charts: out.Charts, LatencyMS: latency}); err != nil {
		return err
	}
	return h.compress(ctx, session, summary, through)
}

// compress folds the messages past the last summary into a new summary
// once there are CompressAt of them.
func (h *chatHandler) compress(ctx context.Context, session, previous string, through int64) error {
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
	text, err := conversation.Summarize(ctx, h.model(), previous, conv, &conversation.SummarizeOptions{Prompt: compressionPrompt})
	if err != nil {
		return fmt.Errorf("chat: summarising the session: %w", err)
	}
	return h.Records.AddSummary(ctx, session, text, msgs[len(msgs)-1].ID)
}

// tokens estimates a text's tokens (four characters a token).
func tokenCount(s string) int { return (len(s) + 3) / 4 }
