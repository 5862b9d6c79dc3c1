package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/lcwire"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	open := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, s.instrument(pattern, h)) }
	api := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, s.instrument(pattern, s.authed(s.authorize(pattern, h))))
	}

	open("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{"ok": true}) })
	open("GET /ok", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{"ok": true}) })
	open("GET /readyz", s.handleReady)
	metrics := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := s.cfg.MetricsToken; tok != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+tok)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="trellis metrics"`)
			writeError(w, &APIError{Status: http.StatusUnauthorized, Message: "GET /metrics needs the metrics token", Hint: "send Authorization: Bearer <the server's --metrics-token>"})
			return
		}
		metrics.ServeHTTP(w, r)
	}))
	open("GET /info", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"version": "trellis", "flags": map[string]any{"assistants": true, "crons": true}})
	})

	api("POST /assistants", s.handleAssistantCreate)
	api("POST /assistants/search", s.handleAssistantSearch)
	api("POST /assistants/count", s.handleAssistantCount)
	api("GET /assistants/{id}", s.handleAssistantGet)
	api("PATCH /assistants/{id}", s.handleAssistantPatch)
	api("DELETE /assistants/{id}", s.handleAssistantDelete)
	api("POST /assistants/{id}/versions", s.handleAssistantVersions)
	api("POST /assistants/{id}/latest", s.handleAssistantLatest)
	api("GET /assistants/{id}/graph", s.handleAssistantGraph)
	api("GET /assistants/{id}/schemas", s.handleAssistantSchemas)
	api("GET /assistants/{id}/subgraphs", s.handleAssistantSubgraphs)
	api("GET /assistants/{id}/subgraphs/{namespace}", s.handleAssistantSubgraphs)

	api("POST /threads", s.handleThreadCreate)
	api("POST /threads/search", s.handleThreadSearch)
	api("POST /threads/count", s.handleThreadCount)
	api("GET /threads/{tid}", s.handleThreadGet)
	api("PATCH /threads/{tid}", s.handleThreadPatch)
	api("DELETE /threads/{tid}", s.handleThreadDelete)
	api("POST /threads/{tid}/copy", s.handleThreadCopy)
	api("GET /threads/{tid}/state", s.handleStateGet)
	api("GET /threads/{tid}/state/{cid}", s.handleStateGet)
	api("POST /threads/{tid}/state/checkpoint", s.handleStateAt)
	api("POST /threads/{tid}/state", s.handleStateUpdate)
	api("PATCH /threads/{tid}/state", s.handleStatePatch)
	api("GET /threads/{tid}/stream", s.handleThreadStream)
	api("POST /threads/prune", s.handleThreadPrune)
	api("POST /threads/{tid}/history", s.handleHistory)
	api("GET /threads/{tid}/history", s.handleHistory)

	api("POST /threads/{tid}/runs", s.handleRunCreate)
	api("POST /threads/{tid}/runs/stream", s.handleRunStream)
	api("POST /threads/{tid}/runs/wait", s.handleRunWait)
	api("GET /threads/{tid}/runs", s.handleRunList)
	api("GET /threads/{tid}/runs/{rid}", s.handleRunGet)
	api("DELETE /threads/{tid}/runs/{rid}", s.handleRunDelete)
	api("POST /threads/{tid}/runs/{rid}/cancel", s.handleRunCancel)
	api("GET /threads/{tid}/runs/{rid}/join", s.handleRunJoin)
	api("GET /threads/{tid}/runs/{rid}/stream", s.handleRunJoinStream)
	api("GET /threads/{tid}/runs/{rid}/ws", s.handleRunWebSocket)
	api("GET /threads/{tid}/ws", s.handleThreadWebSocket)
	api("POST /runs", s.handleRunCreate)
	api("POST /runs/stream", s.handleRunStream)
	api("POST /runs/wait", s.handleRunWait)
	api("POST /runs/batch", s.handleRunsBatch)
	api("POST /runs/cancel", s.handleRunsCancelMany)
	api("GET /runs/{rid}/stream", s.handleRunJoinStream)
	api("GET /runs/{rid}", s.handleRunGet)
	api("POST /runs/crons", s.handleCronCreate)
	api("POST /threads/{tid}/runs/crons", s.handleCronCreate)
	api("POST /runs/crons/search", s.handleCronSearch)
	api("POST /runs/crons/count", s.handleCronCount)
	api("PATCH /runs/crons/{cid}", s.handleCronPatch)
	api("DELETE /runs/crons/{cid}", s.handleCronDelete)

	api("PUT /store/items", s.handleStorePut)
	api("GET /store/items", s.handleStoreGet)
	api("DELETE /store/items", s.handleStoreDelete)
	api("POST /store/items/search", s.handleStoreSearch)
	api("POST /store/namespaces", s.handleStoreNamespaces)

	if !s.cfg.DisableMCP {
		mcpH := s.handleMCP(s.mcpHandler())
		mux.Handle("/mcp", s.instrument("/mcp", s.authed(s.authorize("POST /runs", mcpH))))
	}
	if !s.cfg.DisableA2A {
		s.mountA2A(mux) // a2a.go
	}

	api("GET /apps", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, s.Apps()) })
	for _, spec := range s.cfg.Graphs {
		if spec.Routes != nil {
			spec.Routes(mux, s.authenticateToken)
		}
	}
	s.mountApps(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path), Hint: "see docs/server.md for the routes"})
	})
	return mux
}

// deadlineBody clears the connection's read deadline once the body has been read to its end.
// (After any other error, the deadline stays: the server then stops reading the rest.)
type deadlineBody struct {
	io.ReadCloser
	clear func()
	done  bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.clear()
	}
	return n, err
}

type statusWriter struct {
	http.ResponseWriter
	code int
	err  error // the error of a 5xx answer, for the log
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// instrument limits the body, recovers panics, counts and logs the request.
func (s *Server) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		r.Body = http.MaxBytesReader(sw, r.Body, s.cfg.MaxBodyBytes)
		if r.ContentLength != 0 && r.Method != http.MethodGet {
			// The body must arrive within ReadTimeout; once it has, the handler may take as long
			// as its run does.
			rc := http.NewResponseController(sw)
			if rc.SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
		}
		if err := checkURL(r); err != nil {
			writeError(sw, err)
			s.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
			return
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panicked", "route", route, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.code == 0 {
					writeError(sw, fmt.Errorf("internal error: %v", v))
				}
			}
			s.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
			attrs := []any{"method", r.Method, "path", r.URL.Path, "status", sw.code, "ms", time.Since(start).Milliseconds()}
			if tid := r.PathValue("tid"); tid != "" {
				attrs = append(attrs, "thread_id", tid)
			}
			if rid := r.PathValue("rid"); rid != "" {
				attrs = append(attrs, "run_id", rid)
			}
			if sw.code >= 500 {
				// A failure the client cannot fix is the operator's to see, at the default level.
				errText := http.StatusText(sw.code)
				if sw.err != nil {
					errText = sw.err.Error()
				}
				s.log.Error("request failed", append(attrs, "route", route, "error", errText)...)
				return
			}
			s.log.Debug("request", attrs...)
		}()
		h.ServeHTTP(sw, r)
	})
}

// authenticateToken checks a token given outside the Authorization header (a WebSocket's
// ?token=) the way the API checks that header.
func (s *Server) authenticateToken(ctx context.Context, token string) (Principal, error) {
	if s.cfg.Dev {
		return DevPrincipal, nil
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return Principal{}, err
	}
	r.Header.Set("Authorization", "Bearer "+token)
	return s.cfg.Auth.authenticate(r)
}

func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := DevPrincipal
		if !s.cfg.Dev {
			var err error
			if p, err = s.cfg.Auth.authenticate(r); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="trellis"`)
				writeError(w, err)
				return
			}
		}
		if ok, wait := s.limits.allow(p.Tenant); !ok {
			retryAfter(w, wait)
			writeError(w, s.limits.rateError(p.Tenant, wait))
			return
		}
		h(w, r.WithContext(withPrincipal(r.Context(), p)))
	}
}

func principal(r *http.Request) Principal {
	p, _ := PrincipalFrom(r.Context())
	return p
}

// decode reads a JSON body into v. An empty body leaves v as it is. Errors name the field.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &APIError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit), Hint: "send less, or raise --max-body-bytes"}
		}
		return badRequest("", "cannot read the request body: %v", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := checkJSON(body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				field = "(the body)"
			}
			return badRequest("check the field's type in docs/server.md", "field %q must be %s, not JSON %s", field, jsonKind(te.Type), te.Value)
		case errors.As(err, &se):
			return badRequest("send a valid JSON document", "the body is not valid JSON at byte %d: %v", se.Offset, err)
		default:
			return badRequest("send a JSON object", "the body cannot be read: %v", err)
		}
	}
	return checkCounts(v)
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Float64, reflect.Int32, reflect.Float32:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return t.String()
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if err := s.meta.Ping(r.Context()); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "detail": "database unreachable: " + err.Error()})
		return
	}
	if s.runs.Closing() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "detail": "shutting down"})
		return
	}
	writeJSON(w, 200, map[string]any{"ok": true})
}

// ---- assistants ----

// graphJSON renders a Shape the way the LangGraph API draws graphs: runnable nodes and
// __start__/__end__ as schema nodes; with xray, subgraph nodes are inlined as "parent:child".
func graphJSON(sh graph.Shape, xray int) map[string]any {
	nodes := []map[string]any{}
	edges := []map[string]any{}
	var walk func(sh graph.Shape, prefix string, depth int)
	walk = func(sh graph.Shape, prefix string, depth int) {
		inlined := map[string]bool{}
		for _, n := range sh.Nodes {
			id := prefix + n.ID
			if n.Subgraph != nil && depth < xray {
				inlined[n.ID] = true
				walk(*n.Subgraph, id+":", depth+1)
				continue
			}
			if prefix != "" && (n.ID == graph.START || n.ID == graph.END) {
				continue
			}
			typ := "runnable"
			if n.ID == graph.START || n.ID == graph.END {
				typ = "schema"
			}
			node := map[string]any{"id": id, "type": typ, "data": map[string]any{"id": []string{"trellis", id}, "name": n.ID}}
			if len(n.Metadata) > 0 {
				node["metadata"] = n.Metadata
			}
			nodes = append(nodes, node)
		}
		for _, e := range sh.Edges {
			src, dst := prefix+e.Source, prefix+e.Target
			if prefix != "" && (e.Source == graph.START || e.Target == graph.END) {
				continue // the parent's edges into and out of the subgraph node stand for these
			}
			if inlined[e.Source] {
				src += ":" + graph.END
			}
			if inlined[e.Target] {
				dst += ":" + graph.START
			}
			edge := map[string]any{"source": src, "target": dst}
			if e.Conditional {
				edge["conditional"] = true
			}
			if e.Label != "" {
				edge["data"] = e.Label
			}
			edges = append(edges, edge)
		}
	}
	walk(sh, "", 0)
	return map[string]any{"nodes": nodes, "edges": edges}
}

func (s *Server) handleAssistantGraph(w http.ResponseWriter, r *http.Request) {
	a, err := s.assistantWithGraph(r)
	if err != nil {
		writeError(w, err)
		return
	}
	xray := 0
	switch v := r.URL.Query().Get("xray"); v {
	case "", "false", "0":
	case "true":
		xray = 1 << 10
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, badRequest("use true, false or a depth", "query parameter \"xray\" is %q", v))
			return
		}
		xray = n
	}
	if r.URL.Query().Get("format") == "mermaid" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, a.graph.Mermaid(xray > 0))
		return
	}
	writeJSON(w, 200, graphJSON(a.graph.Shape(), xray))
}

func schemaOf(t reflect.Type, keys []string) any {
	sch, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil || sch == nil {
		return map[string]any{"type": "object", "title": t.Name()}
	}
	raw, err := json.Marshal(sch)
	if err != nil {
		return map[string]any{"type": "object"}
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if props, ok := m["properties"].(map[string]any); ok && len(keys) > 0 {
		for k := range props {
			if !slices.Contains(keys, k) {
				delete(props, k)
			}
		}
	}
	m["title"] = t.Name()
	return m
}

func (s *Server) handleAssistantSchemas(w http.ResponseWriter, r *http.Request) {
	a, err := s.assistantWithGraph(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, graphSchemas(a.GraphID, a.graph))
}

// graphSchemas describes a graph's state as GET /assistants/{id}/schemas does: JSON Schemas of
// its input, output and whole state, and of its configurable values and context when the graph
// declares their types (graph.CompileOptions.ConfigType, ContextType), else null.
func graphSchemas(graphID string, g graph.Runnable) map[string]any {
	t := g.StateType()
	out := map[string]any{
		"graph_id":       graphID,
		"input_schema":   schemaOf(t, g.InputKeys()),
		"output_schema":  schemaOf(t, g.OutputKeys()),
		"state_schema":   schemaOf(t, nil),
		"config_schema":  nil,
		"context_schema": nil,
	}
	if a, ok := g.(*apiGraph); ok {
		g = a.Runnable // the compiled graph's view, which has the types
	}
	if c, ok := g.(interface{ ConfigType() reflect.Type }); ok && c.ConfigType() != nil {
		out["config_schema"] = schemaOf(c.ConfigType(), nil)
	}
	if c, ok := g.(interface{ ContextType() reflect.Type }); ok && c.ContextType() != nil {
		out["context_schema"] = schemaOf(c.ContextType(), nil)
	}
	return out
}

// subgrapher is a graph that can list its compiled subgraphs (a graph.Compiled's Runnable view).
type subgrapher interface{ Subgraphs() []graph.SubgraphNode }

// handleAssistantSubgraphs answers GET /assistants/{id}/subgraphs[/{namespace}]: the schemas of
// the graph's subgraphs by namespace (the node's name; nested ones, with recurse=true, joined by
// '|' as in events' namespaces). With a namespace, only that subgraph (and, with recurse, the
// ones nested in it).
func (s *Server) handleAssistantSubgraphs(w http.ResponseWriter, r *http.Request) {
	a, err := s.assistantWithGraph(r)
	if err != nil {
		writeError(w, err)
		return
	}
	recurse := false
	if v := r.URL.Query().Get("recurse"); v != "" {
		if recurse, err = strconv.ParseBool(v); err != nil {
			writeError(w, badRequest("send recurse=true or recurse=false", "recurse: %q is not a boolean", v))
			return
		}
	}
	want := r.PathValue("namespace")
	out := map[string]any{}
	// walk lists g's subgraphs under prefix: all of them, or only want and the way to it.
	var walk func(prefix string, g graph.Runnable, all bool, depth int)
	walk = func(prefix string, g graph.Runnable, all bool, depth int) {
		sg, ok := g.(subgrapher)
		if !ok || depth > 64 {
			return
		}
		for _, sub := range sg.Subgraphs() {
			switch ns := prefix + sub.Node; {
			case all || ns == want:
				out[ns] = graphSchemas(a.GraphID, sub.Graph)
				if recurse {
					walk(ns+"|", sub.Graph, true, depth+1)
				}
			case strings.HasPrefix(want, ns+"|"):
				walk(ns+"|", sub.Graph, false, depth+1)
			}
		}
	}
	root := a.graph
	if w, ok := root.(*apiGraph); ok {
		root = w.Runnable // the API's wrapper; the subgraphs inside are plain compiled graphs
	}
	walk("", root, want == "", 0)
	if want != "" && len(out) == 0 {
		e := notFound("subgraph", want)
		e.Hint = "list the namespaces with GET /assistants/" + a.AssistantID + "/subgraphs?recurse=true"
		writeError(w, e)
		return
	}
	writeJSON(w, 200, out)
}

// ---- threads ----

func matches(have, want map[string]any) bool {
	for k, v := range want {
		hv, ok := have[k]
		if !ok {
			return false
		}
		a, _ := json.Marshal(hv)
		b, _ := json.Marshal(v)
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

func page[T any](list []T, limit, offset, def int) []T {
	if limit <= 0 {
		limit = def
	}
	if offset < 0 {
		offset = 0
	}
	if offset >= len(list) {
		return nil
	}
	list = list[offset:]
	if len(list) > limit {
		list = list[:limit]
	}
	return list
}

func (s *Server) handleThreadCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
		IfExists string         `json:"if_exists"`
		// TTL deletes the thread after that long without an update (ttl.go).
		TTL json.RawMessage `json:"ttl"`
		// Supersteps seed the new thread's state: each superstep's updates are applied in
		// order, each as its node (as update-state does).
		Supersteps []struct {
			Updates []struct {
				Values json.RawMessage `json:"values"`
				AsNode string          `json:"as_node"`
			} `json:"updates"`
		} `json:"supersteps"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	p := principal(r)
	switch req.IfExists {
	case "", "raise", "do_nothing":
	default:
		writeError(w, badRequest("use raise or do_nothing", "field \"if_exists\" is %q", req.IfExists))
		return
	}
	if req.ThreadID == "" {
		req.ThreadID = uuid.NewString()
	} else if _, err := uuid.Parse(req.ThreadID); err != nil {
		writeError(w, badRequest("use a UUID, or leave it out to get one", "field \"thread_id\" is not a UUID: %q", req.ThreadID))
		return
	}
	md := req.Metadata
	if md == nil {
		md = map[string]any{}
	}
	for k, v := range md {
		if v == nil {
			delete(md, k) // the SDK sends graph_id: undefined as null-less; drop explicit nulls
		}
	}
	ttl, err := parseTTL(req.TTL)
	if err != nil {
		writeError(w, err)
		return
	}
	now := s.meta.Stamp()
	t := &Thread{ThreadID: req.ThreadID, Metadata: md, Status: ThreadIdle, CreatedAt: now, UpdatedAt: now, tenant: p.Tenant, ttlMS: ttl}
	ctx := r.Context()
	created, err := s.meta.createThread(ctx, t)
	if err != nil {
		writeError(w, err)
		return
	}
	if !created {
		existing, err := s.meta.getThread(ctx, p.Tenant, req.ThreadID)
		if err != nil || req.IfExists != "do_nothing" {
			if err == nil || errors.Is(err, ErrNotFound) {
				err = &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("thread %q already exists", req.ThreadID), Hint: "pass if_exists: do_nothing to get the existing thread"}
			}
			writeError(w, err)
			return
		}
		writeJSON(w, 200, existing)
		return
	}
	if len(req.Supersteps) > 0 {
		var updates []seedUpdate
		for i, st := range req.Supersteps {
			for j, u := range st.Updates {
				updates = append(updates, seedUpdate{field: fmt.Sprintf("supersteps[%d].updates[%d]", i, j), values: u.Values, asNode: u.AsNode})
			}
		}
		if err := s.seedThread(ctx, t, updates); err != nil {
			// Nothing of a thread that could not be seeded is kept.
			_ = s.removeThread(context.WithoutCancel(ctx), t)
			writeError(w, err)
			return
		}
	}
	t, _ = s.meta.getThread(ctx, p.Tenant, req.ThreadID)
	writeJSON(w, 200, t)
}

// seedUpdate is one update of a new thread's supersteps; field names it in errors.
type seedUpdate struct {
	field  string
	values json.RawMessage
	asNode string
}

// seedThread applies a new thread's supersteps, update by update, through its graph's
// update-state, then records the thread's values.
func (s *Server) seedThread(ctx context.Context, t *Thread, updates []seedUpdate) error {
	g := s.graphOf(t)
	if g == nil {
		return badRequest("create the thread with metadata.graph_id naming the graph whose state the supersteps hold", "field \"supersteps\" needs to know the thread's graph")
	}
	for _, u := range updates {
		if len(u.values) == 0 || string(u.values) == "null" {
			return badRequest("give the update's values as an object of state keys", "field %q has no values", u.field+".values")
		}
		if _, err := g.UpdateState(ctx, checkpoint.Ref{ThreadID: t.ThreadID}, u.values, u.asNode); err != nil {
			return badRequest("check the state keys and as_node against the graph", "field %q cannot be applied: %v", u.field, err)
		}
	}
	values, interrupts := threadValues(ctx, t.ThreadID, g)
	return s.meta.SetThreadStatus(ctx, t.tenant, t.ThreadID, ThreadIdle, values, interrupts)
}

// removeThread deletes a thread's checkpoints (through the server's saver) and then its record,
// runs and events. The checkpoints go first: a failure leaves the record, so the deletion can be
// asked again.
func (s *Server) removeThread(ctx context.Context, t *Thread) error {
	if err := s.saver.DeleteThreads(ctx, []string{t.ThreadID}); err != nil {
		return err
	}
	return s.meta.DeleteThread(ctx, t.tenant, t.ThreadID)
}

// removeThreads is removeThread for many threads: their checkpoints in one call of the saver,
// then their records, runs and events in one transaction.
func removeThreads(ctx context.Context, saver checkpoint.Saver, meta *metaStore, keys []threadKey) error {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.id
	}
	if err := saver.DeleteThreads(ctx, ids); err != nil {
		return err
	}
	return meta.deleteThreads(ctx, keys)
}

func (s *Server) thread(r *http.Request) (*Thread, error) {
	return s.meta.getThread(r.Context(), principal(r).Tenant, r.PathValue("tid"))
}

func (s *Server) handleThreadGet(w http.ResponseWriter, r *http.Request) {
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, t)
}

func (s *Server) handleThreadPatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Metadata map[string]any  `json:"metadata"`
		TTL      json.RawMessage `json:"ttl"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	ttl, err := parseTTL(req.TTL)
	if err != nil {
		writeError(w, err)
		return
	}
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if ttl > 0 {
		if err := s.meta.SetThreadTTL(r.Context(), t.tenant, t.ThreadID, ttl); err != nil {
			writeError(w, err)
			return
		}
	}
	for k, v := range req.Metadata {
		t.Metadata[k] = v
	}
	if err := s.meta.setThreadMetadata(r.Context(), t.tenant, t.ThreadID, t.Metadata); err != nil {
		writeError(w, err)
		return
	}
	t, err = s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, t)
}

func (s *Server) handleThreadDelete(w http.ResponseWriter, r *http.Request) {
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	active, _ := s.meta.activeRuns(r.Context(), t.tenant, t.ThreadID)
	for _, run := range active {
		_ = s.runs.cancel(r.Context(), t.tenant, t.ThreadID, run.RunID, errCancelInterrupt, true)
	}
	if err := s.removeThread(r.Context(), t); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type threadQuery struct {
	Metadata map[string]any `json:"metadata"`
	Values   map[string]any `json:"values"`
	IDs      []string       `json:"ids"`
	Status   string         `json:"status"`
	Limit    int            `json:"limit"`
	Offset   int            `json:"offset"`
	SortBy   string         `json:"sort_by"`
	SortOrd  string         `json:"sort_order"`
	// Select keeps only these fields of each thread found (search).
	Select []string `json:"select"`
}

// threadFieldNames are the fields of a thread record, for select.
var threadFieldNames = []string{"thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "status", "values", "interrupts", "config"}

// findThreads returns the threads q selects, from the offset-th on and at most limit of them,
// and how many it selects in all when count is set (otherwise the count is a lower bound).
func (s *Server) findThreads(r *http.Request, q threadQuery, offset, limit int, count bool) ([]*Thread, int, error) {
	switch q.Status {
	case "", ThreadIdle, ThreadBusy, ThreadInterrupted, ThreadError:
	default:
		return nil, 0, badRequest("use idle, busy, interrupted or error", "field \"status\" is %q", q.Status)
	}
	if q.SortBy != "" && !slices.Contains(threadSortKeys, q.SortBy) {
		return nil, 0, badRequest("sort by one of "+strings.Join(threadSortKeys, ", "), "field \"sort_by\" is %q", q.SortBy)
	}
	switch q.SortOrd {
	case "", "asc", "desc":
	default:
		return nil, 0, badRequest("use asc or desc", "field \"sort_order\" is %q", q.SortOrd)
	}
	for _, f := range q.Select {
		if !slices.Contains(threadFieldNames, f) {
			return nil, 0, badRequest("select among "+strings.Join(threadFieldNames, ", "), "field \"select\" names unknown field %q", f)
		}
	}
	f := threadFilter{status: q.Status, ids: q.IDs, metadata: q.Metadata, values: q.Values, sortBy: q.SortBy, asc: q.SortOrd == "asc"}
	out := []*Thread{}
	n := 0
	err := s.meta.eachThread(r.Context(), principal(r).Tenant, f, func(t *Thread) bool {
		if !matches(t.Metadata, q.Metadata) {
			return true
		}
		if len(q.Values) > 0 {
			var vals map[string]any
			_ = json.Unmarshal(t.Values, &vals)
			if !matches(vals, q.Values) {
				return true
			}
		}
		n++
		if n > offset && len(out) < limit {
			out = append(out, t)
		}
		return count || len(out) < limit
	})
	return out, n, err
}

func (s *Server) handleThreadSearch(w http.ResponseWriter, r *http.Request) {
	var q threadQuery
	if err := decode(r, &q); err != nil {
		writeError(w, err)
		return
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	list, _, err := s.findThreads(r, q, max(q.Offset, 0), q.Limit, false)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(q.Select) > 0 {
		writeJSON(w, 200, selectFields(list, q.Select))
		return
	}
	writeJSON(w, 200, list)
}

func (s *Server) handleThreadCount(w http.ResponseWriter, r *http.Request) {
	var q threadQuery
	if err := decode(r, &q); err != nil {
		writeError(w, err)
		return
	}
	_, n, err := s.findThreads(r, q, 0, 0, true)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, n)
}

// graphOf picks the graph whose state a thread holds: the one named in its metadata, or the
// only one registered.
func (s *Server) graphOf(t *Thread) graph.Runnable {
	for _, k := range []string{"graph_id", "assistant_id"} {
		if id, ok := t.Metadata[k].(string); ok {
			if a, err := s.assistant(id); err == nil {
				return a.graph
			}
		}
	}
	if len(s.assistants) == 1 {
		return s.assistants[0].graph
	}
	return nil
}

func (s *Server) emptyState() *ThreadState {
	return &ThreadState{Values: map[string]any{}, Next: []string{}, Tasks: []map[string]any{}, Metadata: map[string]any{}, Interrupts: []map[string]any{}}
}

// stateAt answers with the thread's state at checkpoint cpID (the newest when empty), with the
// states of its subgraphs when subgraphs is set (LangGraph's subgraphs=true).
func (s *Server) stateAt(w http.ResponseWriter, r *http.Request, cpID string, subgraphs bool) {
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	g := s.graphOf(t)
	if g == nil {
		writeJSON(w, 200, s.emptyState())
		return
	}
	ref := checkpoint.Ref{ThreadID: t.ThreadID, CheckpointID: cpID}
	var snap *graph.StateSnapshot[any]
	if sg, ok := g.(subgraphStater); ok && subgraphs {
		snap, err = sg.StateWithSubgraphs(r.Context(), ref)
	} else {
		snap, err = g.State(r.Context(), ref)
	}
	if errors.Is(err, checkpoint.ErrNotFound) {
		if cpID != "" {
			writeError(w, notFound("checkpoint", cpID))
			return
		}
		writeJSON(w, 200, s.emptyState())
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, threadStateOf(snap))
}

func (s *Server) handleStateGet(w http.ResponseWriter, r *http.Request) {
	subgraphs := false
	if v := r.URL.Query().Get("subgraphs"); v != "" {
		var err error
		if subgraphs, err = strconv.ParseBool(v); err != nil {
			writeError(w, badRequest("send subgraphs=true or subgraphs=false", "subgraphs: %q is not a boolean", v))
			return
		}
	}
	s.stateAt(w, r, r.PathValue("cid"), subgraphs)
}

func (s *Server) handleStateAt(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
		Subgraphs bool `json:"subgraphs"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	s.stateAt(w, r, req.Checkpoint.CheckpointID, req.Subgraphs)
}

// threadGraph returns the request's thread and the graph that runs on it; a thread no graph has
// run on yet is a 400 saying what to do.
func (s *Server) threadGraph(r *http.Request) (*Thread, graph.Runnable, error) {
	t, err := s.thread(r)
	if err != nil {
		return nil, nil, err
	}
	g := s.graphOf(t)
	if g == nil {
		return nil, nil, badRequest("run an assistant on the thread first, or create it with metadata.graph_id", "thread %q is not tied to a graph", t.ThreadID)
	}
	return t, g, nil
}

func (s *Server) handleStateUpdate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Values       json.RawMessage `json:"values"`
		AsNode       string          `json:"as_node"`
		CheckpointID string          `json:"checkpoint_id"`
		Checkpoint   *struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	t, g, err := s.threadGraph(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.AsNode != "" && req.AsNode != graph.START && !slices.Contains(g.Nodes(), req.AsNode) {
		writeError(w, badRequest(fmt.Sprintf("the graph's nodes are %v", g.Nodes()), "field \"as_node\" names unknown node %q", req.AsNode))
		return
	}
	if len(req.Values) > 0 && string(req.Values) != "null" && !strings.HasPrefix(strings.TrimSpace(string(req.Values)), "{") {
		writeError(w, badRequest("send an object of state keys", "field \"values\" must be an object"))
		return
	}
	if s.runs.Busy(t.ThreadID) {
		writeError(w, &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("thread %q is running a run", t.ThreadID), Hint: "update the state once the run has finished", kind: ErrBusy})
		return
	}
	cp := req.CheckpointID
	if cp == "" && req.Checkpoint != nil {
		cp = req.Checkpoint.CheckpointID
	}
	ref, err := g.UpdateState(r.Context(), checkpoint.Ref{ThreadID: t.ThreadID, CheckpointID: cp}, req.Values, req.AsNode)
	if err != nil {
		writeError(w, badRequest("check the values against GET /assistants/{id}/schemas", "update-state failed: %v", err))
		return
	}
	values, interrupts := threadValues(r.Context(), t.ThreadID, g)
	status := ThreadIdle
	if snap, err := g.State(r.Context(), ref); err == nil {
		if len(snap.Interrupts()) > 0 {
			status = ThreadInterrupted
		}
		s.stateUpdated(t, threadStateOf(snap))
	}
	_ = s.meta.SetThreadStatus(r.Context(), t.tenant, t.ThreadID, status, values, interrupts)
	writeJSON(w, 200, map[string]any{"checkpoint": lcwire.Checkpoint(&ref), "configurable": map[string]any{"thread_id": ref.ThreadID, "checkpoint_ns": ref.NS, "checkpoint_id": ref.CheckpointID}})
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Limit    int            `json:"limit"`
		Before   any            `json:"before"`
		Metadata map[string]any `json:"metadata"`
	}
	if r.Method == http.MethodGet {
		req.Limit, _ = strconv.Atoi(r.URL.Query().Get("limit"))
		if b := r.URL.Query().Get("before"); b != "" {
			req.Before = b
		}
	} else if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Limit <= 0 {
		req.Limit = 10
	}
	before := ""
	switch b := req.Before.(type) {
	case string:
		before = b
	case map[string]any:
		if c, ok := b["configurable"].(map[string]any); ok {
			before, _ = c["checkpoint_id"].(string)
		} else {
			before, _ = b["checkpoint_id"].(string)
		}
	}
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	out := []*ThreadState{}
	if g := s.graphOf(t); g != nil {
		for snap, err := range g.History(r.Context(), t.ThreadID, graph.HistoryOptions{Before: before, Limit: req.Limit, Metadata: req.Metadata}) {
			if err != nil {
				if errors.Is(err, checkpoint.ErrNotFound) {
					break
				}
				writeError(w, err)
				return
			}
			out = append(out, threadStateOf(snap))
		}
	}
	writeJSON(w, 200, out)
}

// handleThreadCopy makes a new thread with the source thread's metadata and its whole history:
// every checkpoint, with the same IDs, so the copy's history and state match the source's.
func (s *Server) handleThreadCopy(w http.ResponseWriter, r *http.Request) {
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	now := s.meta.Stamp()
	md := map[string]any{}
	for k, v := range t.Metadata {
		md[k] = v
	}
	cp := &Thread{ThreadID: uuid.NewString(), Metadata: md, Status: ThreadIdle, CreatedAt: now, tenant: t.tenant}
	if _, err := s.meta.createThread(r.Context(), cp); err != nil {
		writeError(w, err)
		return
	}
	if g := s.graphOf(t); g != nil {
		if err := g.CopyThread(r.Context(), t.ThreadID, cp.ThreadID); err != nil {
			// Nothing of a failed copy is kept.
			_ = s.removeThread(context.WithoutCancel(r.Context()), cp)
			writeError(w, err)
			return
		}
		values, interrupts := threadValues(r.Context(), cp.ThreadID, g)
		_ = s.meta.SetThreadStatus(r.Context(), cp.tenant, cp.ThreadID, ThreadIdle, values, interrupts)
	}
	out, err := s.meta.getThread(r.Context(), cp.tenant, cp.ThreadID)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, out)
}
