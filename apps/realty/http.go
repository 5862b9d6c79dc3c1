package realty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/server/appstream"
)

// ChatRequest is the body of POST /chat and POST /chat/stream.
type ChatRequest struct {
	// SessionID continues a session; empty starts one.
	SessionID string `json:"session_id,omitempty"`
	Message   string `json:"message"`
}

// Data is a turn's structured result: {"type": "listings" | "detail", "items": [...]}.
type Data struct {
	Type  string              `json:"type"`
	Items []realtyapi.Listing `json:"items"`
}

// ChatResponse is the answer of POST /chat.
type ChatResponse struct {
	SessionID string   `json:"session_id"`
	Message   string   `json:"message"`
	Data      *Data    `json:"data"`
	Hints     []string `json:"hints,omitempty"`
}

// Event is one SSE event of POST /chat/stream, in this order: any number of token events, then
// data (when a property tool ran), hints (when there are any), and done.
type Event struct {
	Type      string   `json:"type"`
	Content   string   `json:"content,omitempty"`
	Data      *Data    `json:"data,omitempty"`
	Hints     []string `json:"hints,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	Message   string   `json:"message,omitempty"`
	// Status and RetryAfter (seconds) come with an error event when the model is unavailable:
	// 503, or 502 when it answered wrongly.
	Status     int `json:"status,omitempty"`
	RetryAfter int `json:"retry_after,omitempty"`
}

var sessionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

type apiError struct {
	code       int
	msg        string
	hint       string
	retryAfter int // seconds, for Retry-After; 0 sends none
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func (a *Realty) fail(w http.ResponseWriter, err error) {
	var ae *apiError
	var se *server.APIError
	switch {
	case errors.As(err, &ae):
		if ae.retryAfter > 0 {
			w.Header().Set("Retry-After", fmt.Sprint(ae.retryAfter))
		}
		appkit.Fail(w, ae.code, ae.msg, ae.hint)
	case errors.As(err, &se) && se.Status < 500:
		if se.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="trellis"`)
		}
		appkit.Error(w, se)
	case errors.Is(err, ErrNoSession):
		appkit.Fail(w, http.StatusNotFound, "no such session", "GET /apps/realty/sessions lists yours")
	default:
		a.log.Warn("realty: request failed", "err", err)
		appkit.Fail(w, http.StatusInternalServerError, a.san.Sanitize(err.Error()), "")
	}
}

// Handler serves the app's routes, behind the API's authentication and rate limit.
func (a *Realty) Handler(d server.AppDeps) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /chat", a.chat)
	mux.HandleFunc("GET /skills", func(w http.ResponseWriter, r *http.Request) { appkit.JSON(w, 200, a.reg.Names()) })
	mux.HandleFunc("GET /sessions", a.listSessions)
	mux.HandleFunc("GET /sessions/{id}", a.getSession)
	mux.HandleFunc("DELETE /sessions/{id}", a.deleteSession)
	mux.HandleFunc("GET /sessions/{id}/title", a.title)
	root := http.NewServeMux()
	// The offline photos are public, as photo URLs are.
	root.HandleFunc("GET /photos/{file}", func(w http.ResponseWriter, r *http.Request) {
		zpid, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
		if !ok || zpid == "" || strings.Trim(zpid, "0123456789") != "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		_, _ = w.Write(realtyapi.PhotoSVG(zpid))
	})
	// The stream is the appstream kit's, which guards it itself.
	root.Handle("POST /chat/stream", appstream.New(d, nil).EventStream(a.openChatStream))
	root.Handle("/", appkit.Guard(d)(mux))
	return root
}

func readChat(r *http.Request) (ChatRequest, error) {
	var c ChatRequest
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<10))
	if err := dec.Decode(&c); err != nil {
		return c, badRequest(`the body must be JSON: {"message": "...", "session_id": "..."} (session_id optional): %v`, err)
	}
	c.Message = strings.TrimSpace(c.Message)
	if c.Message == "" {
		return c, badRequest(`field "message" is required: the user's message as text`)
	}
	if c.SessionID == "" {
		c.SessionID = uuid.NewString()
	} else if !sessionRE.MatchString(c.SessionID) {
		return c, badRequest(`field "session_id" must be 1 to 64 letters, digits, - or _ (a UUID); leave it out to start a session`)
	}
	return c, nil
}

// ThreadID is the trellis thread that holds a session.
func ThreadID(session string) string { return server.ThreadIDFor(Name, session) }

func (a *Realty) start(ctx context.Context, p server.Principal, c ChatRequest) (*server.Run, error) {
	req := server.RunRequest{AssistantID: Name, ThreadID: ThreadID(c.SessionID),
		Input:             map[string]any{"messages": []message.Message{message.User(c.Message)}},
		Config:            map[string]any{"configurable": map[string]any{"session_id": c.SessionID}},
		Metadata:          map[string]any{"realty_session": c.SessionID},
		MultitaskStrategy: "enqueue"}
	a.outages.Delete(ThreadID(c.SessionID))
	run, err := a.runs.Start(ctx, p, req)
	if err != nil {
		return nil, err
	}
	return run, a.touchSession(ctx, p, c.SessionID)
}

// touchSession records the session as the caller's, active now.
func (a *Realty) touchSession(ctx context.Context, p server.Principal, id string) error {
	s, err := a.mem.Session(ctx, p.Tenant, id)
	if errors.Is(err, ErrNoSession) {
		s = Session{ID: id}
	} else if err != nil {
		return err
	}
	s.UpdatedAt = time.Now()
	return a.mem.PutSession(ctx, p.Tenant, s)
}

// outcome is what a finished turn gives: the answer, its data, and the exchange for L2.
type outcome struct {
	message string
	data    *Data
	msgs    []message.Message // the whole conversation
	turn    int
}

func (a *Realty) finish(ctx context.Context, p server.Principal, c ChatRequest, run *server.Run) (*outcome, error) {
	_, werr := a.runs.Wait(ctx, p, run.ThreadID, run.RunID)
	if ue, ok := a.outage(run.ThreadID); ok {
		return nil, outageError(ue)
	}
	if werr != nil {
		return nil, werr
	}
	done, err := a.runs.Get(ctx, p, run.ThreadID, run.RunID)
	if err == nil && done.Status == server.RunError {
		return nil, fmt.Errorf("the agent failed on this message; try again")
	}
	msgs, err := a.history(ctx, p, c.SessionID)
	if err != nil {
		return nil, err
	}
	o := &outcome{msgs: msgs}
	start := 0
	for i, m := range msgs {
		if m.Role == message.RoleUser {
			start = i
			o.turn++
		}
	}
	o.turn--
	for _, m := range msgs[start:] {
		switch m.Role {
		case message.RoleAssistant:
			if t := offline.Unlabelled(m); strings.TrimSpace(t) != "" {
				o.message = m.Text()
			}
		case message.RoleTool:
			if d := dataOf(m); d != nil {
				o.data = d
			}
		}
	}
	// L2: the exchange, for retrieval once it is older than the verbatim turns.
	if ex := exchangeText(msgs, o.turn); ex != "" {
		if err := a.mem.SaveEpisode(ctx, p.Tenant, c.SessionID, o.turn, ex); err != nil {
			a.log.Warn("realty: saving the session's episode failed", "err", err)
		}
	}
	if s, err := a.mem.Session(ctx, p.Tenant, c.SessionID); err == nil {
		s.Turns, s.UpdatedAt = o.turn+1, time.Now()
		_ = a.mem.PutSession(ctx, p.Tenant, s)
	}
	return o, nil
}

// fastText is text the fast model wrote, without the offline model's visible label when the
// fast model is the offline one.
func (a *Realty) fastText(s string) string {
	if isOffline(a.fast) {
		s = offline.StripMarker(s)
	}
	return strings.TrimSpace(s)
}

func dataOf(m message.Message) *Data {
	if !StructuredTools[m.Name] || m.IsError {
		return nil
	}
	raw, ok := m.Metadata["structured"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var d Data
	if json.Unmarshal(b, &d) != nil || (d.Type != "listings" && d.Type != "detail") {
		return nil
	}
	if d.Items == nil {
		d.Items = []realtyapi.Listing{}
	}
	return &d
}

// history reads a session's conversation from its thread.
func (a *Realty) history(ctx context.Context, p server.Principal, session string) ([]message.Message, error) {
	// The run API checks that the thread is the caller's; the graph gives it typed.
	if _, err := a.runs.State(ctx, p, ThreadID(session)); err != nil {
		return nil, err
	}
	snap, err := a.graph.State(ctx, checkpoint.Ref{ThreadID: ThreadID(session)})
	if err != nil {
		return nil, fmt.Errorf("realty: reading the session's state: %w", err)
	}
	return snap.Values.Messages, nil
}

// hints are three follow-up questions. After listings or a listing's details they are written
// from what was shown (a listing's street, the search's city and budget), so they read naturally
// and the app understands them offline; otherwise, and for a real model when the turn showed
// nothing, the fast model writes them from the last four messages, tool content left out, and
// any that names no listing ("the details" alone) is replaced.
func (a *Realty) hints(ctx context.Context, msgs []message.Message) []string {
	shownNow := lastTurnData(msgs)
	var h []string
	if shownNow == nil || !isOffline(a.fast) {
		var plain []message.Message
		for _, m := range msgs {
			if m.Role == message.RoleTool || m.Role == message.RoleSystem || (m.Role == message.RoleAssistant && strings.TrimSpace(m.Content) == "") {
				continue
			}
			plain = append(plain, message.Message{Role: m.Role, Content: offline.Unlabelled(m)})
		}
		if len(plain) > 4 {
			plain = plain[len(plain)-4:]
		}
		if got, err := conversation.Hints(ctx, a.fast, plain); err == nil {
			for _, x := range got {
				x = a.fastText(x)
				if x != "" && !vagueHint.MatchString(x) {
					h = append(h, x)
				}
			}
		}
	}
	if shownNow != nil {
		h = append(h, dataHints(shownNow, shownIn(msgs))...)
	}
	if len(h) > 3 {
		h = h[:3]
	}
	for i := range h {
		h[i] = a.san.Sanitize(h[i])
	}
	return h
}

// vagueHint is a follow-up that names nothing: "the details" standing alone as its subject.
var vagueHint = regexp.MustCompile(`(?i)\bthe details\b(?:\s*[?.!]|\s*$|\s+(?:about|on|for)\s+(?:it|this|that|them|these)\b)|\babout the details\b`)

// lastTurnData is the data of the last turn's property tools, nil when it showed none.
func lastTurnData(msgs []message.Message) *Data {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == message.RoleUser {
			return nil
		}
		if d := dataOf(msgs[i]); d != nil && len(d.Items) > 0 {
			return d
		}
	}
	return nil
}

// dataHints are follow-ups about what was just shown, naming listings by their street.
func dataHints(d *Data, s shown) []string {
	street := func(l realtyapi.Listing) string {
		line, _, _ := strings.Cut(l.Address, ",")
		return strings.TrimSpace(line)
	}
	if d.Type == "detail" {
		l := d.Items[0]
		var out []string
		for _, o := range s.listings {
			if o.ZPID != l.ZPID {
				out = append(out, fmt.Sprintf("Compare %s with %s", street(l), street(o)))
				break
			}
		}
		city := ""
		if parts := strings.Split(l.Address, ","); len(parts) > 1 {
			city = strings.TrimSpace(parts[1])
		}
		if l.Price != nil && city != "" {
			out = append(out, fmt.Sprintf("Find homes in %s under $%s", city, thousands(math.Round(*l.Price/1000)*1000)))
		}
		if len(s.listings) > 0 {
			out = append(out, "Show me the cheapest one from the search")
		}
		return append(out, fmt.Sprintf("Find cheaper homes than %s", street(l)))
	}
	out := []string{fmt.Sprintf("Tell me more about %s", street(d.Items[0]))}
	if len(d.Items) > 1 {
		out = append(out, fmt.Sprintf("Compare %s and %s", street(d.Items[0]), street(d.Items[1])))
	}
	return append(out, "Anything cheaper?", "Show me bigger homes")
}

func (a *Realty) chat(w http.ResponseWriter, r *http.Request) {
	c, err := readChat(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	p, err := appkit.Principal(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	run, err := a.start(r.Context(), p, c)
	if err != nil {
		a.fail(w, err)
		return
	}
	o, err := a.finish(r.Context(), p, c, run)
	if err != nil {
		a.fail(w, err)
		return
	}
	appkit.JSON(w, 200, ChatResponse{SessionID: c.SessionID, Message: o.message, Data: o.data, Hints: a.hints(r.Context(), o.msgs)})
}

// openChatStream is POST /chat/stream on the appstream kit, which admitted the request (the
// API's credentials, the Origin, the tenant's rate and open streams) and keeps the stream
// (heartbeats, write deadlines): each Event is an SSE event named by its type, the Event as its
// data.
func (a *Realty) openChatStream(w http.ResponseWriter, r *http.Request, p server.Principal) func(*appstream.Stream) error {
	stream := a.startStream(w, r, p)
	if stream == nil {
		return nil
	}
	return func(s *appstream.Stream) error {
		stream(func(e Event) bool { return s.SendFrame(e) == nil })
		return nil
	}
}

// startStream reads the chat request and starts its run, answering a bad request or a refused
// run itself (nil); it returns what streams the run's events with send, which reports whether
// the client is still there.
func (a *Realty) startStream(w http.ResponseWriter, r *http.Request, p server.Principal) func(send func(Event) bool) {
	c, err := readChat(r)
	if err != nil {
		a.fail(w, err)
		return nil
	}
	ctx := r.Context()
	req := server.RunRequest{AssistantID: Name, ThreadID: ThreadID(c.SessionID),
		Input:             map[string]any{"messages": []message.Message{message.User(c.Message)}},
		Config:            map[string]any{"configurable": map[string]any{"session_id": c.SessionID}},
		Metadata:          map[string]any{"realty_session": c.SessionID},
		StreamMode:        []string{"messages-tuple"},
		MultitaskStrategy: "enqueue"}
	a.outages.Delete(ThreadID(c.SessionID))
	run, events, err := a.runs.Stream(ctx, p, req)
	if err != nil {
		a.fail(w, err)
		return nil
	}
	if err := a.touchSession(ctx, p, c.SessionID); err != nil {
		a.fail(w, err)
		return nil
	}
	return func(out func(Event) bool) {
		// Every event's text passes the sanitizer (an error can quote an upstream answer).
		send := func(e Event) bool {
			e.Message = a.san.Sanitize(e.Message)
			for i := range e.Hints {
				e.Hints[i] = a.san.Sanitize(e.Hints[i])
			}
			return out(e)
		}
		for ev, err := range events {
			if err != nil {
				send(Event{Type: "error", Message: err.Error()})
				return
			}
			if ev.Event == "error" {
				var e struct{ Message string }
				_ = json.Unmarshal(ev.Data, &e)
				if ue, ok := a.outage(run.ThreadID); ok {
					oe := outageError(ue)
					send(Event{Type: "error", Message: oe.msg, Status: oe.code, RetryAfter: oe.retryAfter})
					return
				}
				send(Event{Type: "error", Message: e.Message})
				return
			}
			if tok := ev.ChunkText(); tok != "" && !send(Event{Type: "token", Content: tok}) {
				return
			}
		}
		o, err := a.finish(ctx, p, c, run)
		if err != nil {
			send(Event{Type: "error", Message: err.Error()})
			return
		}
		if o.data != nil && !send(Event{Type: "data", Data: o.data}) {
			return
		}
		if h := a.hints(ctx, o.msgs); len(h) > 0 && !send(Event{Type: "hints", Hints: h}) {
			return
		}
		send(Event{Type: "done", SessionID: c.SessionID})
	}
}

func (a *Realty) listSessions(w http.ResponseWriter, r *http.Request) {
	p, err := appkit.Principal(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	ss, err := a.mem.Sessions(r.Context(), p.Tenant)
	if err != nil {
		a.fail(w, err)
		return
	}
	if r.URL.Query().Get("detail") != "" {
		if ss == nil {
			ss = []Session{}
		}
		appkit.JSON(w, 200, ss)
		return
	}
	ids := make([]string, len(ss))
	for i, s := range ss {
		ids[i] = s.ID
	}
	appkit.JSON(w, 200, ids)
}

// WireMessage is a message of GET /sessions/{id}.
type WireMessage struct {
	Role       string             `json:"role"`
	Content    string             `json:"content"`
	ToolCalls  []message.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string             `json:"tool_call_id,omitempty"`
	Name       string             `json:"name,omitempty"`
	Data       *Data              `json:"data,omitempty"`
}

func (a *Realty) sessionParam(r *http.Request) (string, server.Principal, error) {
	id := r.PathValue("id")
	if !sessionRE.MatchString(id) {
		return "", server.Principal{}, badRequest("the session ID in the path must be 1 to 64 letters, digits, - or _")
	}
	p, err := appkit.Principal(r)
	if err != nil {
		return "", p, err
	}
	if _, err := a.mem.Session(r.Context(), p.Tenant, id); err != nil {
		return "", p, err
	}
	return id, p, nil
}

func (a *Realty) getSession(w http.ResponseWriter, r *http.Request) {
	id, p, err := a.sessionParam(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	msgs, err := a.history(r.Context(), p, id)
	if err != nil {
		a.fail(w, err)
		return
	}
	out := []WireMessage{}
	for _, m := range msgs {
		if m.Role == message.RoleSystem {
			continue
		}
		out = append(out, WireMessage{Role: string(m.Role), Content: m.Text(), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name, Data: dataOf(m)})
	}
	appkit.JSON(w, 200, out)
}

func (a *Realty) deleteSession(w http.ResponseWriter, r *http.Request) {
	id, p, err := a.sessionParam(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	if err := a.mem.DeleteSession(r.Context(), p.Tenant, id); err != nil {
		a.fail(w, err)
		return
	}
	// The server's thread goes too (its runs cancelled, its checkpoints, record, runs and
	// events removed), so the session is gone from GET /threads and POST /threads/search.
	var derr error
	switch {
	case a.runs != nil:
		derr = a.runs.DeleteThread(r.Context(), p, ThreadID(id))
	case a.saver != nil:
		derr = a.saver.DeleteThreads(r.Context(), []string{ThreadID(id)})
	}
	if derr != nil {
		a.fail(w, derr)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *Realty) title(w http.ResponseWriter, r *http.Request) {
	id, p, err := a.sessionParam(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	s, err := a.mem.Session(r.Context(), p.Tenant, id)
	if err != nil {
		a.fail(w, err)
		return
	}
	if s.Title == "" {
		msgs, err := a.history(r.Context(), p, id)
		if err != nil {
			a.fail(w, err)
			return
		}
		for _, m := range msgs {
			if m.Role == message.RoleUser {
				t, err := conversation.Title(r.Context(), a.fast, []message.Message{m})
				if err == nil {
					s.Title = a.san.Sanitize(a.fastText(t))
				}
				break
			}
		}
		if s.Title != "" {
			_ = a.mem.PutSession(r.Context(), p.Tenant, s)
		}
	}
	if s.Title == "" {
		appkit.JSON(w, 200, map[string]any{"session_id": id, "title": nil})
		return
	}
	appkit.JSON(w, 200, map[string]any{"session_id": id, "title": s.Title})
}
