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

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/server/appstream"
)

// Frame is one WebSocket frame, either way: an event name and its data (socket.io's shape).
type Frame struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// conn is a WebSocket of the app's appstream kit, speaking the Frame protocol.
type conn struct {
	s *appstream.Socket
}

func (c *conn) send(event string, data any) error {
	frame, err := newFrame(event, data)
	if err != nil {
		return err
	}
	return c.s.SendFrame(frame)
}

func (c *conn) sendError(msg string) error { return c.send("error", map[string]string{"error": msg}) }

func newFrame(event string, data any) (Frame, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return Frame{}, err
	}
	return Frame{Event: event, Data: b}, nil
}

// socket is a WebSocket route on the app's appstream kit: the API's credentials (?token=), the
// Origin check, the tenant's request rate and open streams (429 before the upgrade),
// heartbeats and write deadlines; then the caller must be a member of an organisation.
func (a *app) socket(serve func(c *conn, p server.Principal)) http.Handler {
	return a.kit.Socket(func(w http.ResponseWriter, r *http.Request, p server.Principal) func(*appstream.Socket) error {
		if p.Tenant == "" {
			appkit.Fail(w, http.StatusUnauthorized, "listforge: no organisation in the credentials", "send a token or API key of your organisation")
			return nil
		}
		if err := a.member(r.Context(), p); err != nil {
			fail(w, err)
			return nil
		}
		return func(s *appstream.Socket) error {
			serve(&conn{s: s}, p)
			return nil
		}
	})
}

// chatRoom is the kit room of a chat session: its events reach every connection joined to the
// session, on every replica.
func chatRoom(session string) string { return "chat:" + session }

// emit sends a chat event to the session's room. A frame too large for the bus between
// replicas (Postgres NOTIFY's 8 KB) reaches the connection c that caused it, when there is one,
// and no other.
func (a *app) emit(ctx context.Context, c *conn, p server.Principal, session, event string, data any) {
	frame, err := newFrame(event, data)
	if err != nil {
		a.d.Logger.Warn("listforge: chat event not encoded", "event", event, "err", err)
		return
	}
	err = a.kit.PublishFrame(ctx, p.Tenant, chatRoom(session), frame)
	if err == nil {
		return
	}
	a.d.Logger.Warn("listforge: chat event not published to the session's room", "event", event, "session", session, "err", err)
	if c != nil && errors.Is(err, server.ErrFanoutTooLarge) {
		_ = c.s.SendFrame(frame)
	}
}

// chatSocket serves the /chat events: join_session, send_message and apply_action in;
// message, token and action_applied out (and error). A session's message, token and
// action_applied events go to its room, so every connection joined to it, on any replica,
// sees them.
func (a *app) chatSocket(c *conn, p server.Principal) {
	ctx := c.s.Context()
	joined := map[string]bool{}
	for {
		data, err := c.s.Read()
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
			if _, err := a.st.GetSession(ctx, whoOf(p), in.SessionID); err != nil {
				_ = c.sendError("Session not found")
				continue
			}
			if err := c.s.Join(chatRoom(in.SessionID)); err != nil {
				_ = c.sendError("listforge: cannot follow the session: " + err.Error())
				continue
			}
			joined[in.SessionID] = true
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
			if err := a.chatTurn(ctx, c, p, in.SessionID, in.Content); err != nil {
				a.d.Logger.Warn("listforge chat turn failed", "session", in.SessionID, "err", err)
				_ = c.sendError(MsgTrouble)
			}
		case "apply_action":
			var in struct {
				MessageID   string `json:"messageId"`
				ActionIndex int    `json:"actionIndex"`
			}
			_ = json.Unmarshal(f.Data, &in)
			res := a.applyAction(ctx, p, in.MessageID, in.ActionIndex)
			if res.SessionID != "" && joined[res.SessionID] {
				a.emit(ctx, c, p, res.SessionID, "action_applied", res)
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
func (a *app) chatTurn(ctx context.Context, c *conn, p server.Principal, session, content string) error {
	w := whoOf(p)
	// The user's message is shown at once and written while the turn starts; the answer is
	// written after it.
	um := store.Message{ID: store.NewID(), SessionID: session, Role: "user", Content: content, CreatedAt: time.Now().UTC()}
	a.emit(ctx, c, p, session, "message", um)
	saved := make(chan error, 1)
	go func() {
		_, err := a.st.AddMessage(context.WithoutCancel(ctx), w, um)
		saved <- err
	}()
	return a.streamTurn(ctx, c, p, session, content, saved)
}

// streamTurn runs the ChatGraph for one message and records its answer once the user's message
// is saved.
func (a *app) streamTurn(ctx context.Context, c *conn, p server.Principal, session, content string, saved <-chan error) (err error) {
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
			if tok := ev.ChunkText(); tok != "" {
				a.emit(ctx, c, p, session, "token", map[string]string{"token": tok})
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
	a.emit(ctx, c, p, session, "message", am)
	return nil
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
		if m.Actions[index].Type == "suggest_price" {
			res.Field = "defaultPrice"
		}
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
func (a *app) researchSocket(c *conn, p server.Principal) {
	ctx, cancel := context.WithCancel(c.s.Context())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	subscribed := map[string]bool{}
	for {
		data, err := c.s.Read()
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
		job, err := a.st.GetRun(ctx, whoOf(p), in.JobID)
		if err == nil && !job.Done() {
			a.jobs.Follow(p, job.ID) // as GET .../jobs/{jobId} does
		}
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
			if errors.Is(err, store.ErrNotFound) {
				// The item was deleted, and the job with it: the job ends failed.
				return c.send("job_complete", JobComplete{JobID: job.ID, Status: store.RunError, Error: MsgItemDeleted, Message: MsgItemDeleted})
			}
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
