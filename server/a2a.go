package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/google/uuid"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// The A2A endpoint: every assistant is an A2A agent (protocol 0.3, JSON-RPC transport), at the
// routes LangGraph's Agent Server uses:
//
//	GET  /.well-known/agent-card.json?assistant_id=ID   the assistant's agent card
//	POST /a2a/{assistant_id}                            JSON-RPC: message/send, message/stream,
//	                                                    tasks/get, tasks/cancel, tasks/resubscribe,
//	                                                    tasks/pushNotificationConfig/* (a2a_push.go)
//
// The wire types are the official A2A Go SDK's (github.com/a2aproject/a2a-go/a2a); the SDK's
// server (a2asrv) is not used, because it keeps tasks in its own store and runs agents in its
// own goroutines, while here a task is a run of the server's queue, read back from the
// database by any replica, in the principal's tenant and (per-user) scope:
//
//   - an A2A context is a thread: a message's contextId names the thread it runs on (created on
//     first use); a message without one starts a new thread, whose ID comes back as contextId;
//   - a task is the run a message starts; its ID is the run's ID. A task that stops on an
//     interrupt is input-required (the interrupts in its status message); the next message of
//     the context (with or without the taskId) resumes it, as Command({resume}) would, and the
//     run that resumes it carries the task's ID in its metadata ("a2a_task_id"), so the task
//     stays one across its runs;
//   - a message's text parts become a user message when the graph's input has "messages" (as
//     LangGraph requires of its A2A assistants), with its images as content blocks and its text
//     files as text; its data parts are input keys (or, resuming, the resume value). The result is an artifact: the last AI message's text, or the state's
//     values as a data part for a graph without messages.
//
// Authentication, tenant and per-user scoping are the API's; Config.Authorize sees the card as
// reading an assistant and every JSON-RPC call as creating runs (as for /mcp).

// a2aTaskKey is the run metadata key naming the task a resuming run continues.
const a2aTaskKey = "a2a_task_id"

// a2aProtocol is the A2A protocol version the endpoint speaks.
const a2aProtocol = "0.3.0"

// mountA2A adds the A2A routes.
func (s *Server) mountA2A(mux *http.ServeMux) {
	card := "GET /.well-known/agent-card.json"
	mux.Handle(card, s.instrument(card, s.authed(s.authorize("GET /assistants/{id}", s.handleA2ACard))))
	rpc := "POST /a2a/{assistant_id}"
	mux.Handle(rpc, s.instrument(rpc, s.authed(s.authorize("POST /runs", s.handleA2A))))
}

// a2aAssistant finds the assistant an A2A request names, in the principal's tenant and
// Config.Authorize's filters.
func (s *Server) a2aAssistant(ctx context.Context, id string) (*Assistant, error) {
	if id == "" {
		return nil, badRequest("add ?assistant_id=<an assistant ID or graph ID> (GET /assistants/search lists them)", "which assistant's agent card? The query has no assistant_id")
	}
	p, _ := PrincipalFrom(ctx)
	a, err := s.assistantFor(ctx, p.Tenant, id)
	if err == nil && !matches(a.Metadata, authAssistantFilters(ctx)) {
		return nil, notFound("assistant", id)
	}
	return a, err
}

// baseURL is the server's address as the client reached it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	host := r.Host
	if h := r.Header.Get("X-Forwarded-Host"); h != "" {
		host = h
	}
	return scheme + "://" + host
}

func (s *Server) handleA2ACard(w http.ResponseWriter, r *http.Request) {
	a, err := s.a2aAssistant(r.Context(), r.URL.Query().Get("assistant_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, s.agentCard(a, baseURL(r)))
}

// agentCard describes an assistant as an A2A agent.
func (s *Server) agentCard(a *Assistant, base string) *a2a.AgentCard {
	desc := mcpDescription(a)
	modes := []string{"text/plain", "application/json"}
	card := &a2a.AgentCard{
		Name:               a.Name,
		Description:        desc,
		URL:                base + "/a2a/" + a.AssistantID,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    a2aProtocol,
		Version:            fmt.Sprint(max(a.Version, 1)),
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  modes,
		DefaultOutputModes: modes,
		Skills: []a2a.AgentSkill{{ID: a.GraphID, Name: a.Name, Description: desc, Tags: []string{"assistant", a.GraphID},
			InputModes: modes, OutputModes: modes}},
		Provider: &a2a.AgentProvider{Org: "trellis", URL: base},
	}
	if !s.cfg.Dev {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{
			"apiKey": a2a.APIKeySecurityScheme{In: a2a.APIKeySecuritySchemeInHeader, Name: "x-api-key", Description: "an API key of the server"},
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "an API key or a JWT"},
		}
		card.Security = []a2a.SecurityRequirements{{"apiKey": {}}, {"bearer": {}}}
	}
	return card
}

// ---- JSON-RPC ----

type a2aRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type a2aError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func (e *a2aError) Error() string { return e.Message }

type a2aResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *a2aError       `json:"error,omitempty"`
}

// JSON-RPC and A2A error codes.
const (
	a2aParseError     = -32700
	a2aInvalidRequest = -32600
	a2aMethodNotFound = -32601
	a2aInvalidParams  = -32602
	a2aInternal       = -32603
	a2aTaskNotFound   = -32001
	a2aNotCancelable  = -32002
)

func rpcError(code int, format string, args ...any) *a2aError {
	return &a2aError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// rpcErrorOf turns an API error into a JSON-RPC error: a client's mistake is invalid params,
// a missing record not found, anything else internal.
func rpcErrorOf(err error) *a2aError {
	var re *a2aError
	if errors.As(err, &re) {
		return re
	}
	var ae *APIError
	if errors.As(err, &ae) {
		code := a2aInternal
		switch {
		case ae.Status == http.StatusNotFound:
			code = a2aTaskNotFound
		case ae.Status >= 400 && ae.Status < 500:
			code = a2aInvalidParams
		}
		e := &a2aError{Code: code, Message: ae.Message}
		if ae.Hint != "" {
			e.Data = map[string]any{"hint": ae.Hint}
		}
		return e
	}
	return &a2aError{Code: a2aInternal, Message: err.Error()}
}

func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, err error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := a2aResponse{JSONRPC: "2.0", ID: id, Result: result}
	if err != nil {
		resp.Result, resp.Error = nil, rpcErrorOf(err)
	}
	writeJSON(w, 200, resp)
}

func (s *Server) handleA2A(w http.ResponseWriter, r *http.Request) {
	var req a2aRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeRPC(w, nil, nil, rpcError(a2aParseError, "the body is not a JSON-RPC request: %v", err))
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeRPC(w, req.ID, nil, rpcError(a2aInvalidRequest, `a JSON-RPC request needs "jsonrpc": "2.0" and a method`))
		return
	}
	a, err := s.a2aAssistant(r.Context(), r.PathValue("assistant_id"))
	if err != nil {
		writeRPC(w, req.ID, nil, rpcErrorOf(err))
		return
	}
	ctx := r.Context()
	switch req.Method {
	case "message/send":
		var params a2a.MessageSendParams
		if err := a2aParams(req.Params, &params); err != nil {
			writeRPC(w, req.ID, nil, err)
			return
		}
		task, err := s.a2aSend(ctx, a, &params)
		writeRPC(w, req.ID, task, err)
	case "message/stream":
		var params a2a.MessageSendParams
		if err := a2aParams(req.Params, &params); err != nil {
			writeRPC(w, req.ID, nil, err)
			return
		}
		s.a2aStream(w, r, req.ID, a, &params)
	case "tasks/get":
		var params a2a.TaskQueryParams
		if err := a2aParams(req.Params, &params); err != nil {
			writeRPC(w, req.ID, nil, err)
			return
		}
		task, err := s.a2aGet(ctx, a, params.ID, params.HistoryLength)
		writeRPC(w, req.ID, task, err)
	case "tasks/cancel":
		var params a2a.TaskIDParams
		if err := a2aParams(req.Params, &params); err != nil {
			writeRPC(w, req.ID, nil, err)
			return
		}
		task, err := s.a2aCancel(ctx, a, params.ID)
		writeRPC(w, req.ID, task, err)
	case "tasks/resubscribe":
		var params a2a.TaskIDParams
		if err := a2aParams(req.Params, &params); err != nil {
			writeRPC(w, req.ID, nil, err)
			return
		}
		s.a2aResubscribe(w, r, req.ID, a, params.ID)
	case "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete":
		res, err := s.a2aPushMethod(ctx, a, req.Method, req.Params)
		writeRPC(w, req.ID, res, err)
	default:
		writeRPC(w, req.ID, nil, rpcError(a2aMethodNotFound, "no method %q; this endpoint serves message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe and tasks/pushNotificationConfig/set|get|list|delete", req.Method))
	}
}

func a2aParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return rpcError(a2aInvalidParams, "the request has no params")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return rpcError(a2aInvalidParams, "the params do not read as the method's: %v", err)
	}
	return nil
}

// ---- tasks as runs ----

// a2aTaskOf is the ID of the task a run belongs to.
func a2aTaskOf(run *Run) string {
	if t, ok := run.Metadata[a2aTaskKey].(string); ok && t != "" {
		return t
	}
	return run.RunID
}

// a2aTaskRun finds a task's newest run, in ctx's scope: the run whose ID the task has, then the
// newest run of its thread that continues it.
func (s *Server) a2aTaskRun(ctx context.Context, a *Assistant, taskID string) (*Run, error) {
	if taskID == "" {
		return nil, rpcError(a2aInvalidParams, "the params have no task id")
	}
	p, _ := PrincipalFrom(ctx)
	first, err := s.meta.getRun(ctx, p.Tenant, "", taskID)
	if err != nil || first.AssistantID != a.AssistantID {
		return nil, rpcError(a2aTaskNotFound, "no task %q for assistant %q", taskID, a.AssistantID)
	}
	if _, err := s.meta.getThread(ctx, p.Tenant, first.ThreadID); err != nil {
		return nil, rpcError(a2aTaskNotFound, "no task %q for assistant %q", taskID, a.AssistantID)
	}
	runs, err := s.meta.listRuns(ctx, p.Tenant, first.ThreadID, "", 100, 0)
	if err != nil {
		return nil, err
	}
	for _, run := range runs {
		if run.RunID == taskID || a2aTaskOf(run) == taskID {
			s.runs.live(run)
			return run, nil
		}
	}
	s.runs.live(first)
	return first, nil
}

// a2aInput reads a message as a run's input or, when the thread waits on interrupts, as the
// value that resumes them.
func a2aInput(a *Assistant, msg *a2a.Message, resuming bool) (json.RawMessage, *RunCommand, error) {
	var texts []string
	var blocks []any // the file parts' content blocks
	data := map[string]any{}
	ndata := 0
	for i, part := range msg.Parts {
		switch p := part.(type) {
		case a2a.TextPart:
			texts = append(texts, p.Text)
		case a2a.DataPart:
			ndata++
			for k, v := range p.Data {
				data[k] = v
			}
		case a2a.FilePart:
			block, text, err := a2aFileBlock(i, p)
			if err != nil {
				return nil, nil, err
			}
			if block != nil {
				blocks = append(blocks, block)
			} else {
				texts = append(texts, text)
			}
		default:
			return nil, nil, &a2aError{Code: a2aContentType, Message: fmt.Sprintf("a %T is not supported: send text, data and file parts", part)}
		}
	}
	text := strings.Join(texts, "\n")
	if resuming && len(blocks) > 0 {
		return nil, nil, rpcError(a2aInvalidParams, "the task waits for an answer: send it as text or data, without images")
	}
	if resuming {
		var v any = text
		if ndata > 0 && len(texts) == 0 {
			v = data
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, nil, rpcError(a2aInvalidParams, "the data parts do not encode: %v", err)
		}
		return nil, &RunCommand{Resume: raw}, nil
	}
	if len(texts) > 0 || len(blocks) > 0 {
		if !slices.Contains(a.graph.InputKeys(), "messages") {
			return nil, nil, rpcError(a2aInvalidParams, "assistant %q takes no messages (its input keys: %s): send a data part with its input instead of text or files",
				a.AssistantID, strings.Join(a.graph.InputKeys(), ", "))
		}
		var content any = text
		if len(blocks) > 0 {
			var list []any
			if text != "" {
				list = append(list, map[string]any{"type": "text", "text": text})
			}
			content = append(list, blocks...)
		}
		data["messages"] = []any{map[string]any{"type": "human", "content": content}}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, nil, rpcError(a2aInvalidParams, "the data parts do not encode: %v", err)
	}
	return raw, nil, nil
}

// a2aContentType is A2A's ContentTypeNotSupportedError.
const a2aContentType = -32005

// a2aFileBlock reads the file part at index i of a message: an image (image/*, as bytes or a
// URI) becomes a content block of the user message ({"type": "image", "data", "mime_type"} or
// {"type": "image", "url"}); a text file given as bytes (text/*, application/json, or no type
// whose bytes are UTF-8) becomes text, headed by its name. Any other file is refused: the
// server's messages hold text and images, and it fetches no URIs but images' (the model does).
func a2aFileBlock(i int, p a2a.FilePart) (block map[string]any, text string, err error) {
	switch f := p.File.(type) {
	case a2a.FileBytes:
		raw, derr := base64.StdEncoding.DecodeString(f.Bytes)
		if derr != nil {
			return nil, "", rpcError(a2aInvalidParams, "parts[%d]: file.bytes is not base64: %v", i, derr)
		}
		mime := strings.ToLower(strings.TrimSpace(f.MimeType))
		switch {
		case strings.HasPrefix(mime, "image/"):
			return map[string]any{"type": "image", "data": f.Bytes, "mime_type": mime}, "", nil
		case strings.HasPrefix(mime, "text/"), mime == "application/json", mime == "" && utf8.Valid(raw):
			name := f.Name
			if name == "" {
				name = fmt.Sprintf("file %d", i)
			}
			return nil, name + ":\n" + string(raw), nil
		}
		return nil, "", &a2aError{Code: a2aContentType, Message: fmt.Sprintf("parts[%d]: files of type %q are not supported: send images (image/*) or text files", i, f.MimeType)}
	case a2a.FileURI:
		if strings.HasPrefix(strings.ToLower(f.MimeType), "image/") {
			return map[string]any{"type": "image", "url": f.URI}, "", nil
		}
		return nil, "", &a2aError{Code: a2aContentType, Message: fmt.Sprintf("parts[%d]: a file by URI must be an image (mimeType image/*); send other files' bytes", i)}
	}
	return nil, "", rpcError(a2aInvalidParams, "parts[%d]: the file part has neither bytes nor uri", i)
}

// a2aStart starts the run a message asks for: on the context's thread (new or named), resuming
// the thread's interrupts if it waits on any. It returns the run, its log, and the task ID.
func (s *Server) a2aStart(ctx context.Context, a *Assistant, params *a2a.MessageSendParams, wait bool) (*Run, *stream.Log, string, error) {
	msg := params.Message
	if msg == nil || len(msg.Parts) == 0 {
		return nil, nil, "", rpcError(a2aInvalidParams, "the params need a message with at least one part")
	}
	p, _ := PrincipalFrom(ctx)
	threadID, taskID := msg.ContextID, string(msg.TaskID)
	if taskID != "" {
		run, err := s.a2aTaskRun(ctx, a, taskID)
		if err != nil {
			return nil, nil, "", err
		}
		if threadID != "" && threadID != run.ThreadID {
			return nil, nil, "", rpcError(a2aInvalidParams, "task %q belongs to context %q, not %q", taskID, run.ThreadID, threadID)
		}
		threadID = run.ThreadID
	}
	resuming := false
	if threadID == "" {
		threadID = uuid.NewString()
	} else if t, err := s.meta.getThread(ctx, p.Tenant, threadID); err == nil {
		resuming = t.Status == ThreadInterrupted || hasInterrupts(t.Interrupts)
		if resuming && taskID == "" {
			if runs, err := s.meta.listRuns(ctx, p.Tenant, threadID, "", 1, 0); err == nil && len(runs) > 0 {
				taskID = a2aTaskOf(runs[0])
			}
		}
	} else if !errors.Is(err, ErrNotFound) {
		return nil, nil, "", err
	}
	if taskID != "" && !resuming {
		return nil, nil, "", rpcError(a2aInvalidParams, "task %q is not waiting for input: send the message without taskId to start a new task in its context", taskID)
	}
	input, cmd, err := a2aInput(a, msg, resuming)
	if err != nil {
		return nil, nil, "", err
	}
	md := map[string]any{"a2a_message_id": msg.ID}
	if taskID != "" {
		md[a2aTaskKey] = taskID
	}
	rc := &runCreate{AssistantID: a.AssistantID, Input: input, Command: cmd, IfNotExists: "create", Metadata: md, wait: wait,
		StreamMode: json.RawMessage(`["updates","messages-tuple"]`), MultitaskStrategy: "enqueue"}
	if err := s.checkRunInputFor(ctx, p.Tenant, rc); err != nil {
		return nil, nil, "", err
	}
	if params.Config != nil && params.Config.PushConfig != nil {
		if err := s.checkPushURL(params.Config.PushConfig.URL); err != nil {
			return nil, nil, "", err
		}
	}
	run, l, err := s.runs.create(ctx, p, threadID, rc)
	if err != nil {
		return nil, nil, "", err
	}
	if taskID == "" {
		taskID = run.RunID
	}
	if params.Config != nil && params.Config.PushConfig != nil {
		pc, err := s.a2aSetPush(ctx, p.Tenant, taskID, *params.Config.PushConfig)
		if err != nil {
			return nil, nil, "", err
		}
		// A run that ended before the config was kept was not told to it: tell it now.
		if fresh, err := s.meta.getRun(ctx, p.Tenant, run.ThreadID, run.RunID); err == nil && fresh.Status != RunPending && fresh.Status != RunRunning {
			s.a2aPush(fresh, taskID, pc.Config.ID)
		}
	}
	return run, l, taskID, nil
}

func hasInterrupts(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	for _, v := range m {
		var list []any
		if json.Unmarshal(v, &list) == nil && len(list) > 0 {
			return true
		}
	}
	return false
}

func (s *Server) a2aSend(ctx context.Context, a *Assistant, params *a2a.MessageSendParams) (*a2a.Task, error) {
	blocking := params.Config == nil || params.Config.Blocking == nil || *params.Config.Blocking
	run, l, taskID, err := s.a2aStart(ctx, a, params, blocking)
	if err != nil {
		return nil, err
	}
	if !blocking {
		return a2aNewTask(run, taskID, params.Message), nil
	}
	defer s.runs.Unwait(run.RunID)
	if !s.waitDone(ctx, l) {
		return nil, ctx.Err() // the client went away; the task goes on
	}
	task, err := s.a2aTask(context.WithoutCancel(ctx), run, taskID, l)
	if err == nil {
		task.History = []*a2a.Message{a2aEcho(params.Message, run, taskID)}
	}
	return task, err
}

// a2aEcho is the client's message as the task's history holds it.
func a2aEcho(m *a2a.Message, run *Run, taskID string) *a2a.Message {
	c := *m
	c.ContextID, c.TaskID = run.ThreadID, a2a.TaskID(taskID)
	return &c
}

func a2aNewTask(run *Run, taskID string, m *a2a.Message) *a2a.Task {
	now := time.Now().UTC()
	return &a2a.Task{ID: a2a.TaskID(taskID), ContextID: run.ThreadID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
		History: []*a2a.Message{a2aEcho(m, run, taskID)}, Metadata: map[string]any{"run_id": run.RunID, "assistant_id": run.AssistantID}}
}

// a2aTask is a run's task as it stands: its state from the run's status and the thread's
// interrupts, the result artifact once completed.
func (s *Server) a2aTask(ctx context.Context, run *Run, taskID string, l *stream.Log) (*a2a.Task, error) {
	p, _ := PrincipalFrom(ctx)
	if fresh, err := s.meta.getRun(ctx, p.Tenant, run.ThreadID, run.RunID); err == nil {
		s.runs.live(fresh)
		run = fresh
	}
	task := &a2a.Task{ID: a2a.TaskID(taskID), ContextID: run.ThreadID, Metadata: map[string]any{"run_id": run.RunID, "assistant_id": run.AssistantID}}
	at := run.UpdatedAt.UTC()
	task.Status.Timestamp = &at
	switch run.Status {
	case RunPending:
		task.Status.State = a2a.TaskStateSubmitted
		return task, nil
	case RunRunning:
		task.Status.State = a2a.TaskStateWorking
		return task, nil
	}
	var out map[string]any
	if raw, err := json.Marshal(s.runs.waitOutput(ctx, run, l)); err == nil {
		_ = json.Unmarshal(raw, &out) // as plain JSON values, whatever types the output holds
	}
	agentMsg := func(parts ...a2a.Part) *a2a.Message {
		m := a2a.NewMessage(a2a.MessageRoleAgent, parts...)
		m.ContextID, m.TaskID = run.ThreadID, a2a.TaskID(taskID)
		return m
	}
	if e, ok := out["__error__"].(map[string]any); ok || run.Status == RunError || run.Status == RunTimeout {
		task.Status.State = a2a.TaskStateFailed
		text := run.LastError
		if e != nil {
			text = fmt.Sprintf("%v: %v", e["error"], e["message"])
		}
		if text == "" {
			text = "the run " + run.Status
		}
		task.Status.Message = agentMsg(a2a.TextPart{Text: text})
		return task, nil
	}
	if ints, _ := out["__interrupt__"].([]any); len(ints) > 0 {
		task.Status.State = a2a.TaskStateInputRequired
		var parts []a2a.Part
		for _, in := range ints {
			m, _ := in.(map[string]any)
			switch v := m["value"].(type) {
			case string:
				parts = append(parts, a2a.TextPart{Text: v})
			case map[string]any:
				parts = append(parts, a2a.DataPart{Data: v})
			default:
				parts = append(parts, a2a.DataPart{Data: map[string]any{"value": v}})
			}
		}
		task.Status.Message = agentMsg(parts...)
		task.Status.Message.Metadata = map[string]any{"interrupts": ints}
		return task, nil
	}
	if run.Status == RunInterrupted {
		task.Status.State = a2a.TaskStateCanceled
		return task, nil
	}
	task.Status.State = a2a.TaskStateCompleted
	task.Artifacts = []*a2a.Artifact{a2aResult(run, out)}
	return task, nil
}

// a2aResult is a finished run's artifact: the last AI message's text when the state has
// messages, else the values as data.
func a2aResult(run *Run, out map[string]any) *a2a.Artifact {
	values := map[string]any{}
	for k, v := range out {
		if !strings.HasPrefix(k, "__") {
			values[k] = v
		}
	}
	art := &a2a.Artifact{ID: a2a.ArtifactID(run.RunID), Name: "result"}
	if text, ok := lastAIText(values["messages"]); ok {
		art.Parts = a2a.ContentParts{a2a.TextPart{Text: text}}
		return art
	}
	art.Parts = a2a.ContentParts{a2a.DataPart{Data: values}}
	return art
}

// lastAIText is the text of the last AI message in a list of messages (LangChain's shape or
// trellis's).
func lastAIText(v any) (string, bool) {
	list, _ := v.([]any)
	for i := len(list) - 1; i >= 0; i-- {
		m, _ := list[i].(map[string]any)
		if m["type"] != "ai" && m["role"] != "assistant" && m["role"] != "ai" {
			continue
		}
		switch c := m["content"].(type) {
		case string:
			return c, true
		case []any:
			var b strings.Builder
			for _, block := range c {
				if bm, ok := block.(map[string]any); ok && bm["type"] == "text" {
					s, _ := bm["text"].(string)
					b.WriteString(s)
				}
			}
			return b.String(), true
		}
		return "", true
	}
	return "", false
}

func (s *Server) a2aGet(ctx context.Context, a *Assistant, id a2a.TaskID, historyLength *int) (*a2a.Task, error) {
	if historyLength != nil && *historyLength < 0 {
		return nil, rpcError(a2aInvalidParams, "historyLength is %d: send a number of messages, 0 or more", *historyLength)
	}
	run, err := s.a2aTaskRun(ctx, a, string(id))
	if err != nil {
		return nil, err
	}
	task, err := s.a2aTask(ctx, run, string(id), s.hub.Get(run.RunID))
	if err != nil {
		return nil, err
	}
	p, _ := PrincipalFrom(ctx)
	if t, err := s.meta.getThread(ctx, p.Tenant, run.ThreadID); err == nil {
		task.History = a2aHistory(t.Values, run.ThreadID, string(id))
	}
	if historyLength != nil && len(task.History) > *historyLength {
		task.History = task.History[len(task.History)-*historyLength:]
	}
	return task, nil
}

// a2aHistory is a task's history: the conversation its context's thread holds (the state's
// messages: the user's as role user, the AI's text as role agent; tool calls and results,
// system prompts left out). A graph without messages has none.
func a2aHistory(values json.RawMessage, contextID, taskID string) []*a2a.Message {
	var v struct {
		Messages []map[string]any `json:"messages"`
	}
	if json.Unmarshal(values, &v) != nil {
		return nil
	}
	out := []*a2a.Message{}
	for i, m := range v.Messages {
		role := a2a.MessageRoleUser
		switch fmt.Sprint(m["type"], "/", m["role"]) {
		case "human/<nil>", "<nil>/user", "human/user":
		case "ai/<nil>", "<nil>/assistant", "ai/assistant", "<nil>/ai":
			role = a2a.MessageRoleAgent
		default:
			continue
		}
		text, _ := lastAIText([]any{map[string]any{"type": "ai", "content": m["content"]}})
		if text == "" {
			continue // a tool call with no text
		}
		id, _ := m["id"].(string)
		if id == "" {
			id = fmt.Sprintf("%s-%d", contextID, i)
		}
		out = append(out, &a2a.Message{ID: id, Role: role, Parts: a2a.ContentParts{a2a.TextPart{Text: text}}, ContextID: contextID, TaskID: a2a.TaskID(taskID)})
	}
	return out
}

// a2aCancel cancels a task's pending or running run and waits for it to stop.
func (s *Server) a2aCancel(ctx context.Context, a *Assistant, id a2a.TaskID) (*a2a.Task, error) {
	run, err := s.a2aTaskRun(ctx, a, string(id))
	if err != nil {
		return nil, err
	}
	if run.Status != RunPending && run.Status != RunRunning {
		task, err := s.a2aTask(ctx, run, string(id), nil)
		if err != nil {
			return nil, err
		}
		return nil, &a2aError{Code: a2aNotCancelable, Message: fmt.Sprintf("task %q is %s: only a submitted or working task can be canceled", id, task.Status.State)}
	}
	if err := s.runs.cancel(ctx, run.tenant, run.ThreadID, run.RunID, errCancelInterrupt, true); err != nil {
		return nil, err
	}
	return s.a2aTask(ctx, run, string(id), nil)
}

// ---- streaming ----

// a2aSSE writes JSON-RPC responses as server-sent events.
type a2aSSE struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	id      json.RawMessage
	timeout time.Duration
}

func (s *Server) newA2ASSE(w http.ResponseWriter, id json.RawMessage) *a2aSSE {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &a2aSSE{w: w, rc: http.NewResponseController(w), id: id, timeout: s.cfg.StreamWriteTimeout}
}

func (e *a2aSSE) send(result any, err error) bool {
	resp := a2aResponse{JSONRPC: "2.0", ID: e.id, Result: result}
	if err != nil {
		resp.Result, resp.Error = nil, rpcErrorOf(err)
	}
	data, merr := json.Marshal(resp)
	if merr != nil {
		return false
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", data); err != nil {
		return false
	}
	_ = e.rc.Flush()
	return true
}

func (s *Server) a2aStream(w http.ResponseWriter, r *http.Request, id json.RawMessage, a *Assistant, params *a2a.MessageSendParams) {
	ctx := r.Context()
	p, _ := PrincipalFrom(ctx)
	done, err := s.limits.openStream(p.Tenant)
	if err != nil {
		writeRPC(w, id, nil, err)
		return
	}
	defer done()
	run, l, taskID, err := s.a2aStart(ctx, a, params, false)
	if err != nil {
		writeRPC(w, id, nil, err)
		return
	}
	out := s.newA2ASSE(w, id)
	if !out.send(a2aNewTask(run, taskID, params.Message), nil) {
		return
	}
	s.a2aFollow(ctx, out, run, taskID, l)
}

func (s *Server) a2aResubscribe(w http.ResponseWriter, r *http.Request, id json.RawMessage, a *Assistant, taskID a2a.TaskID) {
	ctx := r.Context()
	run, err := s.a2aTaskRun(ctx, a, string(taskID))
	if err != nil {
		writeRPC(w, id, nil, err)
		return
	}
	l := s.hub.Get(run.RunID)
	if l == nil && s.bus != nil && (run.Status == RunPending || run.Status == RunRunning) {
		l = s.mirror(run)
	}
	out := s.newA2ASSE(w, id)
	task, err := s.a2aTask(ctx, run, string(taskID), l)
	if !out.send(task, err) || err != nil || l == nil {
		return
	}
	s.a2aFollow(ctx, out, run, string(taskID), l)
}

// a2aFollow streams a run as task events: working, the model's tokens as chunks of the result
// artifact (appended one to the other), a status update per finished node (its update as data,
// any AI message as text), then the whole result artifact (replacing the chunks) and the final
// status.
func (s *Server) a2aFollow(ctx context.Context, out *a2aSSE, run *Run, taskID string, l *stream.Log) {
	status := func(state a2a.TaskState, msg *a2a.Message, final bool) *a2a.TaskStatusUpdateEvent {
		now := time.Now().UTC()
		return &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(taskID), ContextID: run.ThreadID, Final: final,
			Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: &now}}
	}
	if !out.send(status(a2a.TaskStateWorking, nil, false), nil) {
		return
	}
	var after int64
	streamed := false // a token went out as a chunk of the result artifact
	for {
		evs, closed, wake := l.Since(after)
		for _, ev := range evs {
			after = ev.Seq
			if tok := (RunEvent{Event: ev.Event, Data: ev.WholeData()}).ChunkText(); tok != "" {
				// A model's token: a chunk of the result artifact, appended to the ones before.
				art := &a2a.Artifact{ID: a2a.ArtifactID(run.RunID), Name: "result", Parts: a2a.ContentParts{a2a.TextPart{Text: tok}}}
				if !out.send(&a2a.TaskArtifactUpdateEvent{TaskID: a2a.TaskID(taskID), ContextID: run.ThreadID, Artifact: art, Append: streamed}, nil) {
					return
				}
				streamed = true
				continue
			}
			if ev.Event != "updates" {
				continue
			}
			var upd map[string]any
			if json.Unmarshal(ev.WholeData(), &upd) != nil {
				continue
			}
			for _, node := range slicesSortedKeys(upd) {
				if strings.HasPrefix(node, "__") {
					continue
				}
				parts := a2a.ContentParts{a2a.DataPart{Data: map[string]any{"node": node, "update": upd[node]}}}
				if m, ok := upd[node].(map[string]any); ok {
					if text, ok := lastAIText(m["messages"]); ok && text != "" {
						parts = append(a2a.ContentParts{a2a.TextPart{Text: text}}, parts...)
					}
				}
				msg := a2a.NewMessage(a2a.MessageRoleAgent, parts...)
				msg.ContextID, msg.TaskID = run.ThreadID, a2a.TaskID(taskID)
				if !out.send(status(a2a.TaskStateWorking, msg, false), nil) {
					return
				}
			}
		}
		if len(evs) > 0 {
			continue
		}
		if closed {
			break
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return // the task goes on; tasks/get or tasks/resubscribe find it
		}
	}
	task, err := s.a2aTask(context.WithoutCancel(ctx), run, taskID, l)
	if err != nil {
		out.send(nil, err)
		return
	}
	for _, art := range task.Artifacts {
		// The whole result, in place of the chunks streamed (append false: it replaces them).
		if !out.send(&a2a.TaskArtifactUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Artifact: art, LastChunk: true}, nil) {
			return
		}
	}
	ev := status(task.Status.State, task.Status.Message, true)
	ev.Status.Timestamp = task.Status.Timestamp
	out.send(ev, nil)
}

func slicesSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
