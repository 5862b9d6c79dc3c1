package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// The MCP endpoint (POST /mcp): every assistant the principal's tenant may run is an MCP tool,
// served over MCP's Streamable HTTP transport with the official Go SDK, as LangGraph's Agent
// Server does. A tools/call is a run of the assistant: on a throwaway thread, or on the thread
// its thread_id argument names (created on first use, so a client can hold a conversation by
// picking an ID). The transport is stateless: each POST stands alone, authenticated as the API
// authenticates (the same keys and tokens, the same tenant and per-user scoping), so any replica
// answers any request. While a run goes, a client that sent a progress token receives a progress
// notification per finished node.

// mcpThreadArg is the argument naming the thread of a call, unless the graph's input has a key
// of that name (then mcpThreadArgAlt).
const (
	mcpThreadArg    = "thread_id"
	mcpThreadArgAlt = "mcp_thread_id"
)

// mcpToolName keeps what MCP allows in a tool name (letters, digits, '_', '-', '.'; at most 64).
var mcpBadChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func mcpToolName(name string) string {
	n := strings.Trim(mcpBadChars.ReplaceAllString(name, "_"), "_")
	if n == "" {
		n = "assistant"
	}
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

type mcpToolsKey struct{}

// mcpTool is one assistant as a tool.
type mcpTool struct {
	name      string
	a         *Assistant
	threadArg string
}

// mcpSchemas caches each graph's tool input schema (reflection over its state type) by graph ID.
type mcpSchemas struct{ m sync.Map }

// handleMCP lists the tenant's assistants and hands the request to the SDK's handler, whose
// per-request server offers them.
func (s *Server) handleMCP(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		var tools []mcpTool
		if r.Method == http.MethodPost {
			list, err := s.mcpTools(r.Context(), p)
			if err != nil {
				writeError(w, err)
				return
			}
			tools = list
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpToolsKey{}, tools)))
	}
}

// mcpTools lists the assistants p may run, with unique tool names: a name taken by an earlier
// assistant gets the start of its assistant ID.
func (s *Server) mcpTools(ctx context.Context, p Principal) ([]mcpTool, error) {
	all, err := s.findAssistants(ctx, p.Tenant, assistantQuery{})
	if err != nil {
		return nil, err
	}
	// The registered graphs' assistants first, so that they keep their names.
	sort.SliceStable(all, func(i, j int) bool { return s.isRegistered(all[i].AssistantID) && !s.isRegistered(all[j].AssistantID) })
	taken := map[string]bool{}
	var out []mcpTool
	for _, a := range all {
		reg := s.registered(a.GraphID)
		if reg == nil {
			continue // a graph this server does not serve
		}
		if a.graph == nil {
			b := *a
			b.graph = reg.graph
			a = &b
		}
		name := mcpToolName(a.Name)
		if taken[name] {
			name = mcpToolName(name[:min(len(name), 55)] + "_" + a.AssistantID[:8])
		}
		taken[name] = true
		t := mcpTool{name: name, a: a, threadArg: mcpThreadArg}
		if slices.Contains(a.graph.InputKeys(), mcpThreadArg) {
			t.threadArg = mcpThreadArgAlt
		}
		out = append(out, t)
	}
	return out, nil
}

// mcpHandler is the SDK's Streamable HTTP handler, stateless, serving a server made for each
// request with the tools handleMCP listed.
func (s *Server) mcpHandler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		tools, _ := r.Context().Value(mcpToolsKey{}).([]mcpTool)
		return s.mcpServer(r.Context(), principal(r), tools)
	}, &sdk.StreamableHTTPOptions{Stateless: true, Logger: s.log.With(slog.String("component", "mcp"))})
}

// mcpServer makes the server of one request; reqCtx is the HTTP request's context, which ends
// when the client goes away (the SDK's own, in a stateless server, does not).
func (s *Server) mcpServer(reqCtx context.Context, p Principal, tools []mcpTool) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "trellis", Version: "1"}, &sdk.ServerOptions{
		Instructions: "Each tool runs an assistant of this trellis server and answers with the state it ends in. " +
			"Give thread_id to run on a thread (created on first use) and keep its state across calls; without it the run is stateless.",
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		Logger:       s.log.With(slog.String("component", "mcp")),
	})
	for _, t := range tools {
		srv.AddTool(&sdk.Tool{Name: t.name, Title: t.a.Name, Description: mcpDescription(t.a), InputSchema: s.mcpInputSchema(t)}, s.mcpCall(reqCtx, p, t))
	}
	return srv
}

func mcpDescription(a *Assistant) string {
	if a.Description != nil && *a.Description != "" {
		return *a.Description
	}
	return fmt.Sprintf("Runs the assistant %q (graph %s) with the given input and answers with its final state.", a.Name, a.GraphID)
}

// mcpInputSchema is the graph's input schema (as GET /assistants/{id}/schemas gives it) with
// the thread argument added.
func (s *Server) mcpInputSchema(t mcpTool) map[string]any {
	key := t.a.GraphID + "\x00" + t.threadArg
	if v, ok := s.mcpSchemas.m.Load(key); ok {
		return v.(map[string]any)
	}
	in, _ := graphSchemas(t.a.GraphID, t.a.graph)["input_schema"].(map[string]any)
	sch := maps.Clone(in)
	if sch == nil {
		sch = map[string]any{}
	}
	sch["type"] = "object"
	props, _ := sch["properties"].(map[string]any)
	props = maps.Clone(props)
	if props == nil {
		props = map[string]any{}
	}
	props[t.threadArg] = map[string]any{"type": "string",
		"description": "the thread to run on, created on first use; the same ID continues the conversation. Leave it out for a stateless run."}
	sch["properties"] = props
	s.mcpSchemas.m.Store(key, sch)
	return sch
}

// mcpCall runs the tool's assistant as p. Failures a client can fix come back as tool results
// with isError, as MCP asks; a cancelled call cancels its run.
func (s *Server) mcpCall(reqCtx context.Context, p Principal, t mcpTool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ctx, cancel := context.WithCancel(withPrincipal(ctx, p))
		defer cancel()
		defer context.AfterFunc(reqCtx, cancel)()
		args := map[string]json.RawMessage{}
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return mcpError("the arguments must be a JSON object of the graph's input keys: %v", err), nil
			}
		}
		var threadID string
		if raw, ok := args[t.threadArg]; ok {
			if err := json.Unmarshal(raw, &threadID); err != nil {
				return mcpError("argument %q must be a string (a thread ID)", t.threadArg), nil
			}
			delete(args, t.threadArg)
		}
		input, _ := json.Marshal(args)
		rc := &runCreate{AssistantID: t.a.AssistantID, Input: input, IfNotExists: "create", wait: true,
			StreamMode: json.RawMessage(`["updates"]`), MultitaskStrategy: "enqueue"}
		if err := s.checkRunInputFor(ctx, p.Tenant, rc); err != nil {
			return mcpError("%s", apiErrorText(err)), nil
		}
		done, err := s.limits.openStream(p.Tenant)
		if err != nil {
			return mcpError("%s", apiErrorText(err)), nil
		}
		defer done()
		run, l, err := s.runs.create(ctx, p, threadID, rc)
		if err != nil {
			return mcpError("%s", apiErrorText(err)), nil
		}
		defer s.runs.Unwait(run.RunID)
		if !s.mcpFollow(ctx, req, l) {
			_ = s.runs.cancel(context.WithoutCancel(ctx), p.Tenant, run.ThreadID, run.RunID, errCancelInterrupt, false)
			return nil, ctx.Err()
		}
		return mcpResult(s.runs.waitOutput(ctx, run, l), run, threadID != ""), nil
	}
}

// mcpFollow waits for the run's log to close, sending a progress notification per node that
// finishes when the client asked for progress. It reports false when ctx ended first.
func (s *Server) mcpFollow(ctx context.Context, req *sdk.CallToolRequest, l *stream.Log) bool {
	token := req.Params.GetProgressToken()
	var after int64
	steps := 0
	for {
		evs, closed, wake := l.Since(after)
		for _, ev := range evs {
			after = ev.Seq
			if token == nil || ev.Event != "updates" {
				continue
			}
			var upd map[string]json.RawMessage
			_ = json.Unmarshal(ev.WholeData(), &upd)
			nodes := slices.Sorted(maps.Keys(upd))
			steps++
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(steps),
				Message: "finished " + strings.Join(nodes, ", ")})
		}
		if len(evs) > 0 {
			continue
		}
		if closed {
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

// mcpResult turns a run's output (POST /runs/wait's answer) into a tool result: the values as
// JSON text and as structured content; a failed run's error with isError.
func mcpResult(out any, run *Run, onThread bool) *sdk.CallToolResult {
	meta := sdk.Meta{"run_id": run.RunID}
	if onThread {
		meta["thread_id"] = run.ThreadID
	}
	if m, ok := out.(map[string]any); ok {
		if e, ok := m["__error__"].(map[string]any); ok {
			res := mcpError("the run failed: %v: %v", e["error"], e["message"])
			res.Meta = meta
			return res
		}
	}
	text, err := json.Marshal(out)
	if err != nil {
		return mcpError("the run's output does not encode as JSON: %v", err)
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}, Meta: meta}
	if _, ok := out.(map[string]any); ok {
		res.StructuredContent = json.RawMessage(text)
	}
	return res
}

func mcpError(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// apiErrorText is an error as a client reads it: an *APIError's message and hint.
func apiErrorText(err error) string {
	var e *APIError
	if errors.As(err, &e) && e.Hint != "" {
		return e.Message + " (" + e.Hint + ")"
	}
	return err.Error()
}
