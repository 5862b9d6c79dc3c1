package listforge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
)

// Frame is one WebSocket frame, either way: an event name and its data (socket.io's shape).
type Frame struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// conn is a WebSocket connection whose writes are serialised.
type conn struct {
	c   *websocket.Conn
	mu  sync.Mutex
	ctx context.Context
}

func (c *conn) send(event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	frame, _ := json.Marshal(Frame{Event: event, Data: b})
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	return c.c.Write(ctx, websocket.MessageText, frame)
}

func (c *conn) sendError(msg string) error { return c.send("error", map[string]string{"error": msg}) }

// accept opens a WebSocket counted against the tenant's open streams.
func (a *app) accept(w http.ResponseWriter, r *http.Request, p server.Principal) (*conn, func(), bool) {
	done := func() {}
	if a.d.OpenStream != nil {
		d, err := a.d.OpenStream(p.Tenant)
		if err != nil {
			fail(w, err)
			return nil, nil, false
		}
		done = d
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		done()
		return nil, nil, false
	}
	return &conn{c: c, ctx: r.Context()}, func() { c.CloseNow(); done() }, true
}

// rooms fans a session's events out to the connections of this process joined to it.
type rooms struct {
	mu sync.Mutex
	by map[string]map[*conn]bool
}

func (r *rooms) join(session string, c *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string]map[*conn]bool{}
	}
	if r.by[session] == nil {
		r.by[session] = map[*conn]bool{}
	}
	r.by[session][c] = true
}

func (r *rooms) leave(c *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s, m := range r.by {
		delete(m, c)
		if len(m) == 0 {
			delete(r.by, s)
		}
	}
}

func (r *rooms) emit(session, event string, data any) {
	r.mu.Lock()
	var cs []*conn
	for c := range r.by[session] {
		cs = append(cs, c)
	}
	r.mu.Unlock()
	for _, c := range cs {
		_ = c.send(event, data)
	}
}

var chatRooms rooms

// chatSocket serves the /chat events: join_session, send_message and apply_action in;
// message, token and action_applied out (and error).
func (a *app) chatSocket(w http.ResponseWriter, r *http.Request, p server.Principal) {
	c, done, ok := a.accept(w, r, p)
	if !ok {
		return
	}
	defer done()
	defer chatRooms.leave(c)
	joined := map[string]bool{}
	for {
		_, data, err := c.c.Read(r.Context())
		if err != nil {
			return
		}
		var f Frame
		if err := json.Unmarshal(data, &f); err != nil {
			_ = c.sendError(`listforge: the frame is not JSON; send {"event": "send_message", "data": {...}}`)
			continue
		}
		switch f.Event {
		case "join_session":
			var in struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(f.Data, &in)
			if _, err := a.st.GetSession(r.Context(), whoOf(p), in.SessionID); err != nil {
				_ = c.sendError("Session not found")
				continue
			}
			joined[in.SessionID] = true
			chatRooms.join(in.SessionID, c)
			_ = c.send("joined", map[string]any{"success": true, "sessionId": in.SessionID})
		case "send_message":
			var in struct {
				SessionID string `json:"sessionId"`
				Content   string `json:"content"`
			}
			_ = json.Unmarshal(f.Data, &in)
			if !joined[in.SessionID] {
				_ = c.sendError(MsgSessionExpired + ": join_session first with a session of yours")
				continue
			}
			if strings.TrimSpace(in.Content) == "" {
				_ = c.sendError("listforge: the message is empty; put the text in data.content")
				continue
			}
			if err := a.chatTurn(r.Context(), p, in.SessionID, in.Content); err != nil {
				a.d.Logger.Warn("listforge chat turn failed", "session", in.SessionID, "err", err)
				_ = c.sendError(MsgTrouble)
			}
		case "apply_action":
			var in struct {
				MessageID   string `json:"messageId"`
				ActionIndex int    `json:"actionIndex"`
			}
			_ = json.Unmarshal(f.Data, &in)
			res := a.applyAction(r.Context(), p, in.MessageID, in.ActionIndex)
			if res.SessionID != "" && joined[res.SessionID] {
				chatRooms.emit(res.SessionID, "action_applied", res)
			} else {
				_ = c.send("action_applied", res)
			}
		default:
			_ = c.sendError(fmt.Sprintf("listforge: unknown event %q; send join_session, send_message or apply_action", f.Event))
		}
	}
}

// ChatThread is the server thread a session's turns run on.
func ChatThread(session string) string { return server.ThreadIDFor(AppName, "chat:"+session) }

// chatTurn answers one message: it is recorded and broadcast, the ChatGraph runs as a run of
// the session's thread with its tokens streamed, and the answer with its actions is recorded
// and broadcast.
func (a *app) chatTurn(ctx context.Context, p server.Principal, session, content string) error {
	w := whoOf(p)
	// The user's message is shown at once and written while the turn starts; the answer is
	// written after it.
	um := store.Message{ID: store.NewID(), SessionID: session, Role: "user", Content: content, CreatedAt: time.Now().UTC()}
	chatRooms.emit(session, "message", um)
	saved := make(chan error, 1)
	go func() {
		_, err := a.st.AddMessage(context.WithoutCancel(ctx), w, um)
		saved <- err
	}()
	return a.streamTurn(ctx, p, session, content, saved)
}

// streamTurn runs the ChatGraph for one message and records its answer once the user's message
// is saved.
func (a *app) streamTurn(ctx context.Context, p server.Principal, session, content string, saved <-chan error) (err error) {
	w := whoOf(p)
	waited := false
	wait := func() error {
		if waited {
			return nil
		}
		waited = true
		return <-saved
	}
	defer func() {
		if werr := wait(); err == nil {
			err = werr
		}
	}()
	run, events, err := a.d.Runs.Stream(ctx, p, server.RunRequest{AssistantID: ChatGraphID, ThreadID: ChatThread(session),
		Input:      map[string]any{"sessionId": session, "userMessage": content, "userId": p.User},
		StreamMode: []string{"messages-tuple"}, MultitaskStrategy: "enqueue", Metadata: map[string]any{"listforge_session": session}})
	if err != nil {
		return err
	}
	for ev, err := range events {
		if err != nil {
			return err
		}
		switch ev.Event {
		case "messages":
			if tok := chunkText(ev.Data); tok != "" {
				chatRooms.emit(session, "token", map[string]string{"token": tok})
			}
		case "error":
			return fmt.Errorf("chat run failed: %s", ev.Data)
		}
	}
	raw, err := a.d.Runs.Wait(ctx, p, run.ThreadID, run.RunID)
	if err != nil {
		return err
	}
	var out ChatState
	if err := json.Unmarshal(raw, &out); err != nil {
		return err
	}
	if out.Response == "" {
		out.Response = MsgTrouble
	}
	if err := wait(); err != nil {
		return err
	}
	am, err := a.st.AddMessage(ctx, w, store.Message{SessionID: session, Role: "assistant", Content: out.Response, Actions: out.Actions, ToolCalls: out.ToolCalls})
	if err != nil {
		return err
	}
	chatRooms.emit(session, "message", am)
	return nil
}

// chunkText is the text of a messages-tuple event ([chunk, metadata]).
func chunkText(data json.RawMessage) string {
	var pair []json.RawMessage
	if json.Unmarshal(data, &pair) != nil || len(pair) == 0 {
		return ""
	}
	var chunk struct {
		Content any `json:"content"`
	}
	if json.Unmarshal(pair[0], &chunk) != nil {
		return ""
	}
	if s, ok := chunk.Content.(string); ok {
		return s
	}
	return ""
}

// ActionResult is the action_applied event.
type ActionResult struct {
	Success     bool        `json:"success"`
	MessageID   string      `json:"messageId"`
	ActionIndex int         `json:"actionIndex"`
	SessionID   string      `json:"sessionId,omitempty"`
	Field       string      `json:"field,omitempty"`
	Item        *store.Item `json:"item,omitempty"`
	JobID       string      `json:"jobId,omitempty"`
	Error       string      `json:"error,omitempty"`
}

// applyAction applies a proposed action once.
func (a *app) applyAction(ctx context.Context, p server.Principal, messageID string, index int) ActionResult {
	res := ActionResult{MessageID: messageID, ActionIndex: index}
	w := whoOf(p)
	var startItem, startType string
	m, out, err := a.st.ApplyAction(ctx, w, messageID, index, func(tx *appdb.Tx, act store.Action) (any, error) {
		itemID, _ := act.Payload["itemId"].(string)
		switch act.Type {
		case "update_field", "suggest_price":
			field, _ := act.Payload["field"].(string)
			value := act.Payload["value"]
			if act.Type == "suggest_price" {
				field, value = "defaultPrice", act.Payload["amount"]
			}
			reason, _ := act.Payload["reason"].(string)
			return a.st.UpdateFieldTx(ctx, tx, w, itemID, field, value, reason)
		case "start_research":
			startItem, _ = act.Payload["itemId"].(string)
			startType, _ = act.Payload["type"].(string)
			return nil, nil
		}
		return nil, fmt.Errorf("listforge: unknown action type %q", act.Type)
	})
	if m != nil {
		res.SessionID = m.SessionID
	}
	if err != nil {
		res.Error = err.Error()
		if errors.Is(err, store.ErrAlreadyApplied) {
			res.Error = "This change was already applied."
		}
		return res
	}
	res.Success = true
	if it, ok := out.(*store.Item); ok {
		res.Item = it
		res.Field, _ = m.Actions[index].Payload["field"].(string)
	}
	if startType != "" || m.Actions[index].Type == "start_research" {
		if startItem == "" {
			ss, err := a.st.GetSession(ctx, w, m.SessionID)
			if err == nil {
				startItem = ss.ItemID
			}
		}
		job, err := a.jobs.Start(ctx, p, startItem, startType, "normal")
		if err != nil {
			res.Success, res.Error = false, err.Error()
			return res
		}
		res.JobID = job.ID
	}
	return res
}

// NodeComplete is the node_complete event.
type NodeComplete struct {
	JobID     string `json:"jobId"`
	Node      string `json:"node"`
	Status    string `json:"status"`
	Timestamp string `json:"timestamp"`
	Error     string `json:"error,omitempty"`
}

// JobComplete is the job_complete event.
type JobComplete struct {
	JobID    string          `json:"jobId"`
	Status   string          `json:"status"`
	Error    string          `json:"error,omitempty"`
	Message  string          `json:"message,omitempty"`
	Research *store.Research `json:"research,omitempty"`
}

// researchSocket serves the /research events: subscribe_job in; job_status, node_complete
// and job_complete out. A late subscriber gets the job's progress so far first.
func (a *app) researchSocket(w http.ResponseWriter, r *http.Request, p server.Principal) {
	c, done, ok := a.accept(w, r, p)
	if !ok {
		return
	}
	defer done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	subscribed := map[string]bool{}
	for {
		_, data, err := c.c.Read(ctx)
		if err != nil {
			cancel()
			return
		}
		var f Frame
		var in struct {
			JobID string `json:"jobId"`
		}
		if json.Unmarshal(data, &f) != nil || f.Event != "subscribe_job" || json.Unmarshal(f.Data, &in) != nil || in.JobID == "" {
			_ = c.sendError(`listforge: send {"event": "subscribe_job", "data": {"jobId": "..."}}`)
			continue
		}
		job, err := a.job(r, p, "", in.JobID)
		if err != nil {
			_ = c.sendError("Job not found")
			continue
		}
		if subscribed[job.ID] {
			continue
		}
		subscribed[job.ID] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.streamJob(ctx, c, p, job); err != nil && ctx.Err() == nil {
				a.d.Logger.Warn("listforge: job progress stream failed", "job", job.ID, "err", err)
			}
		}()
	}
}

// streamJob sends a job's status, its finished steps, then its live steps to its end.
func (a *app) streamJob(ctx context.Context, c *conn, p server.Principal, job *store.ResearchRun) error {
	if err := c.send("job_status", job); err != nil {
		return err
	}
	for _, s := range job.StepHistory {
		if s.Status == "running" {
			continue
		}
		at := s.StartedAt
		if s.CompletedAt != nil {
			at = *s.CompletedAt
		}
		if err := c.send("node_complete", NodeComplete{JobID: job.ID, Node: s.Node, Status: s.Status, Error: s.Error, Timestamp: at.Format(time.RFC3339Nano)}); err != nil {
			return err
		}
	}
	paused := func(j *store.ResearchRun) bool {
		return j.Status == store.RunPending && j.Message == research.MsgPaused
	}
	runID, after := job.RunID, job.LastSeq
	for !job.Done() {
		wasPaused := paused(job)
		if wasPaused {
			if err := c.send("job_status", job); err != nil {
				return err
			}
		} else if runID != "" {
			for ev, err := range a.d.Runs.Follow(ctx, p, job.ThreadID, runID, after) {
				if err != nil {
					return err
				}
				after = ev.Seq
				if ev.Event != "custom" {
					continue
				}
				pr, ok := parseProgress(ev.Data)
				if !ok {
					continue
				}
				if pr.Phase == "start" {
					// The status with the node now running, for the progress panel's spinner.
					now := time.Now().UTC()
					live := *job
					live.Status, live.CurrentNode = store.RunRunning, pr.Node
					if live.StartedAt == nil {
						live.StartedAt = &now
					}
					if err := c.send("job_status", &live); err != nil {
						return err
					}
					continue
				}
				if err := c.send("node_complete", NodeComplete{JobID: job.ID, Node: pr.Node, Status: pr.Status, Error: pr.Error, Timestamp: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
					return err
				}
			}
		}
		// The run's stream ended, or the job is paused: wait for its record to move on.
		for {
			changed := a.jobs.waitChange(job.ID)
			next, err := a.st.GetRun(ctx, whoOf(p), job.ID)
			if err != nil {
				return err
			}
			if next.Done() || next.RunID != runID || paused(next) != wasPaused {
				job = next
				break
			}
			a.jobs.Follow(p, job.ID) // somebody must record it: this process, if no other does
			select {
			case <-changed:
			case <-time.After(500 * time.Millisecond): // recorded by another replica
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if job.RunID != runID {
			runID, after = job.RunID, 0
		}
	}
	if err := c.send("job_status", job); err != nil {
		return err
	}
	out := JobComplete{JobID: job.ID, Status: job.Status, Error: job.Error, Message: job.Message}
	if job.Status == store.RunSuccess {
		out.Research, _ = a.st.LatestResearch(ctx, whoOf(p), job.ItemID)
	}
	return c.send("job_complete", out)
}
