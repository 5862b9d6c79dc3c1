package rehab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/server/appstream"
)

// API serves the app's routes.
type API struct {
	Parts
	Runs *server.Runs
	// Logger records the internal errors the user is spared (may be nil).
	Logger *slog.Logger
}

// Routes are the app's HTTP routes (under /apps/rehab), behind the API's authentication: the
// chat's SSE stream is the appstream kit's, which guards it itself (the API's credentials, the
// Origin, the tenant's rate and open streams, heartbeats, write deadlines); d.Guard guards the
// rest.
func (a *API) Routes(d server.AppDeps) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/profile", a.profile)
	mux.HandleFunc("GET /api/v1/portfolio", a.portfolio)
	mux.HandleFunc("GET /api/v1/portfolio/compare", a.compare)
	mux.HandleFunc("GET /api/v1/actions", a.actions)
	mux.HandleFunc("GET /api/v1/conversations", a.conversations)
	mux.HandleFunc("GET /api/v1/conversations/{id}/messages", a.messages)
	mux.HandleFunc("GET /api/v1/conversations/{id}/state", a.state)
	mux.HandleFunc("GET /api/v1/properties/{id}/analysis", a.analysis)
	mux.HandleFunc("GET /api/v1/properties/{id}/report.pdf", a.report)
	mux.HandleFunc("GET /api/v1/listings", func(w http.ResponseWriter, r *http.Request) { appkit.JSON(w, http.StatusOK, listing.DemoList()) })
	root := http.NewServeMux()
	root.Handle("POST "+ChatPath, appstream.New(d, nil).EventStream(a.openChat))
	root.Handle("/", appkit.Guard(d)(mux))
	return root
}

// fail answers an error in the API's shape: store.ErrNotFound 404, anything else as
// appkit.Error does.
func fail(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		appkit.Fail(w, http.StatusNotFound, err.Error(), "")
		return
	}
	appkit.Error(w, err)
}

// badField answers 400 naming the field that was wrong.
func badField(w http.ResponseWriter, field, problem string) {
	appkit.Fail(w, http.StatusBadRequest, "rehab: field "+strconv.Quote(field)+": "+problem, `send {"message": "...", "conversation_id": "optional"} to the chat; see docs/apps/rehab.md for the other routes`)
}

// caller is the request's principal (the server's guard put it there) and its user, or a 401
// answered.
func (a *API) caller(w http.ResponseWriter, r *http.Request) (server.Principal, store.Who, bool) {
	p, ok := appkit.Caller(w, r)
	return p, store.Who{Tenant: p.Tenant, User: p.User}, ok
}

// ProfileView is GET /api/v1/profile.
type ProfileView struct {
	Name      string                    `json:"name"`
	Location  string                    `json:"location"`
	Summary   string                    `json:"summary"`
	Sections  map[string]map[string]any `json:"sections"`
	Summaries map[string]string         `json:"section_summaries"`
	Memory    store.Memory              `json:"memory"`
	Exists    bool                      `json:"exists"`
}

func (a *API) profile(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	p, err := a.Data.Profile(r.Context(), u)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, ProfileView{Name: p.Name, Location: p.Location, Summary: kb.MasterSummary(p), Sections: p.Sections,
		Summaries: p.Summaries, Memory: p.Memory, Exists: p.Exists})
}

func (a *API) portfolio(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	archived := false
	if v := r.URL.Query().Get("archived"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			badField(w, "archived", "send true or false")
			return
		}
		archived = b
	}
	items, err := a.Data.Portfolio(r.Context(), u, archived)
	writeRows(w, items, err)
}

func (a *API) compare(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	ids := strings.Split(r.URL.Query().Get("ids"), ",")
	if len(ids) < 2 || len(ids) > 3 {
		badField(w, "ids", "send 2 or 3 property ids separated by commas")
		return
	}
	var items []store.PortfolioItem
	for _, id := range ids {
		it, err := a.Data.Item(r.Context(), u, strings.TrimSpace(id))
		if err != nil {
			fail(w, err)
			return
		}
		items = append(items, *it)
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"items": items, "table": CompareTable(items)})
}

func limitParam(w http.ResponseWriter, r *http.Request, def int) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 500 {
		badField(w, "limit", "send a whole number from 1 to 500")
		return 0, false
	}
	return n, true
}

func (a *API) actions(w http.ResponseWriter, r *http.Request) {
	listed(a, w, r, 50, a.Data.Actions)
}

func (a *API) conversations(w http.ResponseWriter, r *http.Request) {
	listed(a, w, r, 20, a.Data.Conversations)
}

// listed answers a list of the caller's rows (at most ?limit=, def when absent) as a JSON array,
// never null.
func listed[T any](a *API, w http.ResponseWriter, r *http.Request, def int, list func(context.Context, store.Who, int) ([]T, error)) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	n, ok := limitParam(w, r, def)
	if !ok {
		return
	}
	rows, err := list(r.Context(), u, n)
	writeRows(w, rows, err)
}

// writeRows answers rows as a JSON array (never null), or err in the API's error shape.
func writeRows[T any](w http.ResponseWriter, rows []T, err error) {
	if err != nil {
		fail(w, err)
		return
	}
	if rows == nil {
		rows = []T{}
	}
	appkit.JSON(w, http.StatusOK, rows)
}

func (a *API) messages(w http.ResponseWriter, r *http.Request) {
	u, id, ok := a.conversation(w, r)
	if !ok {
		return
	}
	ms, err := a.Data.Messages(r.Context(), u, id)
	writeRows(w, ms, err)
}

// conversation is the caller and the conversation {id} of the request, false (the error
// written) when the caller is not known or the conversation is not theirs.
func (a *API) conversation(w http.ResponseWriter, r *http.Request) (store.Who, string, bool) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return store.Who{}, "", false
	}
	id := r.PathValue("id")
	if _, err := a.Data.Conversation(r.Context(), u, id); err != nil {
		fail(w, err)
		return store.Who{}, "", false
	}
	return u, id, true
}

// StateView is GET /api/v1/conversations/{id}/state: what the UI's todo list and focus show.
type StateView struct {
	ConversationID string     `json:"conversation_id"`
	Todos          []kb.Todo  `json:"todos"`
	Focus          *kb.Focus  `json:"current_focus,omitempty"`
	Context        string     `json:"context_block"`
	Pending        *Interrupt `json:"pending_consent,omitempty"`
}

// Interrupt is a question waiting for the user's consent.
type Interrupt struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// threadID is the thread of a user's conversation.
func threadID(u store.Who, conv string) string {
	return server.ThreadIDFor(Name, u.User+"\x00"+conv)
}

func (a *API) state(w http.ResponseWriter, r *http.Request) {
	u, id, ok := a.conversation(w, r)
	if !ok {
		return
	}
	view := StateView{ConversationID: id, Todos: []kb.Todo{}}
	snap, err := a.Orchestrator.Graph.State(r.Context(), checkpoint.Ref{ThreadID: threadID(u, id)})
	if err == nil && snap != nil {
		if snap.Values.Todos != nil {
			view.Todos = snap.Values.Todos
		}
		view.Focus = snap.Values.CurrentFocus
		for _, m := range snap.Values.Messages {
			if m.Name == kb.ContextRefresh {
				view.Context = m.Content
			}
		}
		for _, in := range snap.Interrupts() {
			view.Pending = &Interrupt{ID: in.ID, Value: in.Value}
		}
	}
	appkit.JSON(w, http.StatusOK, view)
}

func (a *API) analysis(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	it, err := a.Data.Item(r.Context(), u, r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	an, err := a.Data.LatestAnalysis(r.Context(), u, it.PropertyID, "renovation")
	if err != nil {
		fail(w, err)
		return
	}
	rooms, err := a.Data.RoomFeatures(r.Context(), u, it.PropertyID)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"item": it, "analysis": an, "rooms": rooms})
}

// ChatRequest is the body of POST /api/v1/chat.
type ChatRequest struct {
	Message        string `json:"message"`
	ConversationID string `json:"conversation_id,omitempty"`
}

// Event is one SSE event of the chat stream; Type is thinking, tool_call, action, message,
// todo_update or error.
type Event struct {
	Type           string         `json:"type"`
	Message        string         `json:"message,omitempty"`
	Tool           string         `json:"tool,omitempty"`
	Args           map[string]any `json:"args,omitempty"`
	ActionType     string         `json:"action_type,omitempty"`
	Summary        string         `json:"summary,omitempty"`
	Content        *string        `json:"content,omitempty"`
	Done           *bool          `json:"done,omitempty"`
	Todos          []kb.Todo      `json:"todos,omitempty"`
	ConversationID string         `json:"conversation_id,omitempty"`
	// Consent is set on the message that asks for consent (the run waits for the answer, which
	// the next chat message gives).
	Consent *ConsentRequest `json:"consent,omitempty"`
}

// MaxMessageBytes bounds a chat message.
const MaxMessageBytes = 8000

// ChatPath is the chat's SSE route (under /apps/rehab).
const ChatPath = "/api/v1/chat"

// openChat is the chat on the appstream kit: the request was admitted (credentials, Origin, the
// tenant's rate and open streams); the body is checked before the stream starts, and each
// Event is an SSE event named by its type, the Event as its data, as chat writes them.
func (a *API) openChat(w http.ResponseWriter, r *http.Request, p server.Principal) func(*appstream.Stream) error {
	serve := a.prepareChat(w, r, p)
	if serve == nil {
		return nil
	}
	return func(s *appstream.Stream) error {
		return serve(func(e Event) error { return s.SendFrame(e) })
	}
}

// prepareChat reads and checks the chat request and opens its conversation, answering a bad
// one itself (nil); it returns the turn, which streams its events with send.
func (a *API) prepareChat(w http.ResponseWriter, r *http.Request, p server.Principal) func(send func(Event) error) error {
	u := store.Who{Tenant: p.Tenant, User: p.User}
	var req ChatRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case errors.As(err, &ute):
			badField(w, ute.Field, "must be a string")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			badField(w, f, `unknown field; send {"message": "...", "conversation_id": "optional"}`)
		default:
			appkit.Fail(w, http.StatusBadRequest, "rehab: the body is not JSON ("+err.Error()+")", `send {"message": "...", "conversation_id": "optional"}`)
		}
		return nil
	}
	req.Message = strings.TrimSpace(req.Message)
	switch {
	case req.Message == "":
		badField(w, "message", "required: the user's text")
		return nil
	case len(req.Message) > MaxMessageBytes || !utf8.ValidString(req.Message):
		badField(w, "message", fmt.Sprintf("must be valid UTF-8 text of at most %d bytes", MaxMessageBytes))
		return nil
	}
	ctx := r.Context()
	sess, err := a.Orchestrator.OpenSession(ctx, a.Env, u, req.ConversationID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			appkit.Fail(w, http.StatusNotFound, "rehab: field \"conversation_id\": "+err.Error(), "leave conversation_id out to start a conversation")
			return nil
		}
		fail(w, err)
		return nil
	}
	conv := sess.Conversation.ID
	return func(send func(Event) error) error {
		_ = send(Event{Type: "thinking", Message: "A processar...", ConversationID: conv})
		if err := a.turn(ctx, send, p, u, conv, req.Message); err != nil {
			// The user reads what happened and what to do in pt-PT; the detail goes to the log.
			if a.Logger != nil {
				a.Logger.Error("rehab: a chat turn failed", "conversation", conv, "err", err)
			}
			_ = send(Event{Type: "error", Message: InternalErrorReply})
		}
		return nil
	}
}

// turn runs one message through the graph and streams its events.
func (a *API) turn(ctx context.Context, send func(Event) error, p server.Principal, u store.Who, conv, text string) error {
	thread := threadID(u, conv)
	rr := server.RunRequest{AssistantID: GraphID, ThreadID: thread, StreamMode: []string{"messages-tuple", "updates"},
		MultitaskStrategy: "enqueue", Config: map[string]any{"configurable": map[string]any{"conversation_id": conv}},
		Metadata: map[string]any{"rehab_conversation": conv}}
	var todos []kb.Todo
	snap, err := a.Orchestrator.Graph.State(ctx, checkpoint.Ref{ThreadID: thread})
	if err == nil && snap != nil && len(snap.Interrupts()) > 0 {
		// The run waits for consent: this message is the answer.
		resume, _ := json.Marshal(text)
		rr.Command = &server.RunCommand{Resume: resume}
	} else {
		rr.Input = map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}}
	}
	if err == nil && snap != nil {
		todos = snap.Values.Todos
	}
	_, events, err := a.Runs.Stream(ctx, p, rr)
	if err != nil {
		return err
	}
	sent := map[string]bool{}
	var answer strings.Builder
	paused := false
	for ev, err := range events {
		if err != nil {
			return err
		}
		switch {
		case ev.Event == "messages":
			if tok := agentToken(ev); tok != "" {
				answer.WriteString(tok)
				if err := send(Event{Type: "message", Content: &tok, Done: ptr(false)}); err != nil {
					return err
				}
			}
		case ev.Event == "updates":
			var upd map[string]json.RawMessage
			if json.Unmarshal(ev.Data, &upd) != nil {
				continue
			}
			for node, raw := range upd {
				switch node {
				case "agent":
					for _, c := range toolCallsOf(raw) {
						answer.Reset() // text before a tool call is not the answer
						if err := send(Event{Type: "tool_call", Tool: c.name, Args: c.args}); err != nil {
							return err
						}
					}
				case "tools":
					var out struct {
						Events []map[string]any `json:"stream_events"`
						Todos  []kb.Todo        `json:"todos"`
					}
					_ = json.Unmarshal(raw, &out)
					for _, e := range out.Events {
						key, _ := json.Marshal(e)
						if sent[string(key)] {
							continue
						}
						sent[string(key)] = true
						kind, _ := e["action_type"].(string)
						sum, _ := e["summary"].(string)
						if err := send(Event{Type: "action", ActionType: kind, Summary: sum}); err != nil {
							return err
						}
					}
					if len(out.Todos) > 0 {
						for _, t := range out.Todos {
							todos = mergeTodo(todos, t)
						}
						if err := send(Event{Type: "todo_update", Todos: todos}); err != nil {
							return err
						}
					}
				case "__interrupt__":
					var ins []struct {
						Value ConsentRequest `json:"value"`
					}
					if json.Unmarshal(raw, &ins) == nil && len(ins) > 0 {
						paused = true
						q := ins[0].Value.Question
						c := ins[0].Value
						if err := send(Event{Type: "message", Content: &q, Done: ptr(true), Consent: &c, ConversationID: conv}); err != nil {
							return err
						}
					}
				}
			}
		case ev.Event == "error":
			var e struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(ev.Data, &e)
			return errors.New(e.Message)
		}
	}
	if paused {
		return nil
	}
	empty := ""
	return send(Event{Type: "message", Content: &empty, Done: ptr(true), ConversationID: conv})
}

func mergeTodo(list []kb.Todo, t kb.Todo) []kb.Todo {
	for i := range list {
		if list[i].ID == t.ID {
			list[i] = t
			return list
		}
	}
	return append(list, t)
}

func ptr[T any](v T) *T { return &v }

// agentToken is the text the agent node streams in a messages-tuple event.
func agentToken(ev server.RunEvent) string {
	if c, ok := ev.MessageChunk(); ok && (c.Node == "" || c.Node == "agent") {
		return ev.ChunkText()
	}
	return ""
}

type callView struct {
	name string
	args map[string]any
}

// toolCallsOf reads the tool calls of an agent update, in trellis's or LangChain's shape.
func toolCallsOf(raw json.RawMessage) []callView {
	var upd struct {
		Messages []struct {
			ToolCalls []struct {
				Name      string          `json:"name"`
				Args      map[string]any  `json:"args"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if json.Unmarshal(raw, &upd) != nil {
		return nil
	}
	var out []callView
	for _, m := range upd.Messages {
		for _, c := range m.ToolCalls {
			args := c.Args
			if args == nil && len(c.Arguments) > 0 {
				_ = json.Unmarshal(c.Arguments, &args)
			}
			out = append(out, callView{name: c.Name, args: args})
		}
	}
	return out
}
