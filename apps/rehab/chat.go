package rehab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/trellis-go/trellis/apps/rehab/data"
	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/orchestrator"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/server/appstream"
)

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
	Consent *orchestrator.ConsentRequest `json:"consent,omitempty"`
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
	u := data.Who{Tenant: p.Tenant, User: p.User}
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
		if errors.Is(err, data.ErrNotFound) {
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
			_ = send(Event{Type: "error", Message: orchestrator.InternalErrorReply})
		}
		return nil
	}
}

// turn runs one message through the graph and streams its events.
func (a *API) turn(ctx context.Context, send func(Event) error, p server.Principal, u data.Who, conv, text string) error {
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
						Value orchestrator.ConsentRequest `json:"value"`
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
