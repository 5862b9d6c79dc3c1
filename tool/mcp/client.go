package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

// Transport says how to reach an MCP server: [Command] (stdio), [HTTP] (streamable HTTP) or
// [SDKTransport] (any transport of the MCP Go SDK, such as an in-memory one).
type Transport interface {
	transport() (sdk.Transport, string, error)
}

// Command starts an MCP server as a child process and speaks to it over its stdin and stdout.
type Command struct {
	// Path is the program to run, looked up in PATH when it has no slash. Required.
	Path string
	// Args are its arguments.
	Args []string
	// Env is its environment; nil means this process's environment.
	Env []string
	// Dir is its working directory; empty means this process's.
	Dir string
	// Stderr receives what the server writes to stderr; nil discards it.
	Stderr io.Writer
	// TerminateAfter is how long Close waits for the server to exit after closing its stdin
	// before it is terminated. Zero means the SDK's default (5 seconds).
	TerminateAfter time.Duration
}

func (c Command) transport() (sdk.Transport, string, error) {
	if c.Path == "" {
		return nil, "", errors.New("mcp: Command.Path is empty; give the server program to run, for example \"npx\" or \"node\"")
	}
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return nil, "", fmt.Errorf("mcp: cannot start MCP server %q: %w (is it installed and in PATH?)", c.Path, err)
	}
	cmd := exec.Command(path, c.Args...)
	cmd.Env, cmd.Dir, cmd.Stderr = c.Env, c.Dir, c.Stderr
	name := strings.TrimSpace(c.Path + " " + strings.Join(c.Args, " "))
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: c.TerminateAfter}, name, nil
}

// HTTP reaches an MCP server over the streamable HTTP transport.
type HTTP struct {
	// URL is the server's MCP endpoint, such as http://localhost:3001/mcp. Required.
	URL string
	// Header is sent with every request, for example an Authorization header.
	Header http.Header
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// NoStandaloneStream skips the long-lived GET stream servers use to push notifications. Tool
	// calls do not need it.
	NoStandaloneStream bool
}

func (h HTTP) transport() (sdk.Transport, string, error) {
	if h.URL == "" {
		return nil, "", errors.New("mcp: HTTP.URL is empty; give the server's MCP endpoint, for example http://localhost:3001/mcp")
	}
	if !strings.HasPrefix(h.URL, "http://") && !strings.HasPrefix(h.URL, "https://") {
		return nil, "", fmt.Errorf("mcp: HTTP.URL %q is not an http:// or https:// URL", h.URL)
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	if len(h.Header) > 0 {
		c := *client
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c.Transport = headerTransport{base: base, header: h.Header.Clone()}
		client = &c
	}
	return &sdk.StreamableClientTransport{Endpoint: h.URL, HTTPClient: client, DisableStandaloneSSE: h.NoStandaloneStream}, h.URL, nil
}

type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		r.Header[k] = append([]string(nil), vs...)
	}
	return t.base.RoundTrip(r)
}

// SDKTransport uses a transport of the MCP Go SDK directly. An SDK transport serves one
// connection, so a client can reconnect only when Redial is set.
type SDKTransport struct {
	Transport sdk.Transport
	// Name labels the server in errors; empty means "mcp server".
	Name string
	// Redial, when set, returns a fresh transport to the same server; the client calls it to
	// reconnect after the session ended. Nil means the client does not reconnect.
	Redial func() (sdk.Transport, error)
}

func (s SDKTransport) transport() (sdk.Transport, string, error) {
	if s.Transport == nil {
		return nil, "", errors.New("mcp: SDKTransport.Transport is nil")
	}
	return s.Transport, s.name(), nil
}

func (s SDKTransport) name() string {
	if s.Name == "" {
		return "mcp server"
	}
	return s.Name
}

// redial returns how to get a fresh transport for a reconnection, or nil when there is none.
func redial(t Transport) func() (sdk.Transport, error) {
	switch t := t.(type) {
	case SDKTransport:
		if t.Redial == nil {
			return nil
		}
		return t.Redial
	case *SDKTransport:
		if t == nil || t.Redial == nil {
			return nil
		}
		return t.Redial
	}
	return func() (sdk.Transport, error) {
		tr, _, err := t.transport()
		return tr, err
	}
}

// Options configure [Connect]. The zero value loads every tool under its own name, checks
// arguments against each tool's schema before sending them, and marks results as external.
type Options struct {
	// Prefix, when set, is put before each tool's name with an underscore ("github_create_issue"),
	// so that tools of several servers cannot clash. Names are then made valid for every model
	// provider with [tool.SanitizeName].
	Prefix string
	// Include, when not empty, loads only the tools with these (server-side) names.
	Include []string
	// Policy is attached to every loaded tool. A zero Policy is replaced by one with External
	// set: what an MCP server returns comes from outside this process. Set Trusted to keep a zero
	// policy.
	Policy tool.Policy
	// Trusted keeps the Policy exactly as given, even when it is zero.
	Trusted bool
	// NoValidate sends arguments without checking them against the tool's schema first. The
	// server still checks them; its message is then the one the model reads.
	NoValidate bool
	// ClientName and ClientVersion identify this client to the server; empty means "trellis" and
	// "dev".
	ClientName, ClientVersion string
	// NoCallInfo stops the client from sending the caller's tool.CallInfo (user, tenant, thread
	// and run IDs, call ID) in each tools/call request's _meta (see [MetaUser] and the others).
	NoCallInfo bool
	// MaxReconnects is how many connection attempts in a row a call makes, waiting
	// ReconnectBackoff and then twice as long each time (up to 5s), after the session ended
	// before it fails with an error that says the server is unavailable. The next call tries
	// again. Zero means 3; negative means the client never reconnects.
	MaxReconnects int
	// ReconnectBackoff is the first wait between connection attempts; zero means 200ms.
	ReconnectBackoff time.Duration
}

// Keys of the _meta object a [Client] sends with each tools/call, holding the caller's
// tool.CallInfo; keys whose value is empty are left out. [CallInfoFromMeta] reads them back.
const (
	MetaUser     = "trellis/user"
	MetaTenant   = "trellis/tenant"
	MetaThreadID = "trellis/thread_id"
	MetaRunID    = "trellis/run_id"
	MetaCallID   = "trellis/call_id"
)

// ErrUnavailable is matched (with errors.Is) by the error of a call made while the server cannot
// be reached: the session ended and reconnecting failed MaxReconnects times, or reconnection is
// off.
var ErrUnavailable = errors.New("mcp: server unavailable")

// metaOf returns the _meta of a tools/call made for info, or nil when there is nothing to send.
func metaOf(info tool.CallInfo) sdk.Meta {
	var m sdk.Meta
	for _, kv := range [...]struct{ k, v string }{
		{MetaUser, info.User}, {MetaTenant, info.Tenant}, {MetaThreadID, info.ThreadID}, {MetaRunID, info.RunID}, {MetaCallID, info.CallID},
	} {
		if kv.v == "" {
			continue
		}
		if m == nil {
			m = sdk.Meta{}
		}
		m[kv.k] = kv.v
	}
	return m
}

// CallInfoFromMeta reads the caller's identity a trellis [Client] sent in a tools/call's _meta.
// The client asserts these values: use it as ServerOptions.CallInfo only for clients the server
// trusts (its own processes, or behind an authenticating proxy), since any client can send them.
// Permissions are never read from _meta.
func CallInfoFromMeta(_ context.Context, req *sdk.CallToolRequest) (tool.CallInfo, error) {
	var info tool.CallInfo
	if req == nil || req.Params == nil {
		return info, nil
	}
	get := func(k string) string {
		v, _ := req.Params.Meta[k].(string)
		return v
	}
	info.User, info.Tenant, info.ThreadID, info.RunID = get(MetaUser), get(MetaTenant), get(MetaThreadID), get(MetaRunID)
	return info, nil
}

// Client is a connection to one MCP server. It is safe for concurrent use; close it when done.
//
// When the session ends (a stdio server exits, an HTTP server restarts and forgets the session,
// the connection drops), the next call reconnects, with backoff, before it is sent; a call whose
// request could not have reached the server (the session was gone, the connection was refused)
// is sent again once on the new session.
type Client struct {
	name   string
	opts   Options
	impl   *sdk.Implementation
	redial func() (sdk.Transport, error)

	mu      sync.Mutex // guards session, dead, closed
	session *sdk.ClientSession
	dead    bool // the session ended; the next call reconnects
	closed  bool

	dial sync.Mutex // held while reconnecting, so concurrent calls share one reconnection
}

// Connect starts a session with an MCP server. ctx bounds only the connection and handshake; the
// session lasts until [Client.Close].
func Connect(ctx context.Context, t Transport, opts *Options) (*Client, error) {
	if t == nil {
		return nil, errors.New("mcp: Connect needs a Transport: Command, HTTP or SDKTransport")
	}
	tr, name, err := t.transport()
	if err != nil {
		return nil, err
	}
	c := &Client{name: name, redial: redial(t)}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxReconnects < 0 {
		c.redial = nil
	}
	c.impl = &sdk.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion}
	if c.impl.Name == "" {
		c.impl.Name = "trellis"
	}
	if c.impl.Version == "" {
		c.impl.Version = "dev"
	}
	session, err := c.connect(ctx, tr)
	if err != nil {
		return nil, &ServerError{Server: name, Op: "connect", Err: err,
			Hint: "check that the server starts and speaks MCP on this transport"}
	}
	c.session = session
	return c, nil
}

// connect opens a session on tr and watches it, so that its end is noticed before the next call.
func (c *Client) connect(ctx context.Context, tr sdk.Transport) (*sdk.ClientSession, error) {
	session, err := sdk.NewClient(c.impl, nil).Connect(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	go func() {
		_ = session.Wait()
		c.markDead(session)
	}()
	return session, nil
}

func (c *Client) markDead(s *sdk.ClientSession) {
	c.mu.Lock()
	if c.session == s {
		c.dead = true
	}
	c.mu.Unlock()
}

// Close ends the session (and stops a [Command] server). Calls after Close fail.
func (c *Client) Close() error {
	c.mu.Lock()
	s := c.session
	c.closed = true
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.Close()
}

// Session returns the current SDK session, for features beyond tools (resources, prompts). After
// a reconnection it is a new session.
func (c *Client) Session() *sdk.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// live returns a session to call on, reconnecting first when the last one ended.
func (c *Client) live(ctx context.Context) (*sdk.ClientSession, error) {
	c.mu.Lock()
	s, dead, closed := c.session, c.dead, c.closed
	c.mu.Unlock()
	switch {
	case closed:
		return nil, &ServerError{Server: c.name, Op: "call", Err: errors.New("the client is closed")}
	case !dead:
		return s, nil
	}
	c.dial.Lock()
	defer c.dial.Unlock()
	c.mu.Lock()
	s, dead = c.session, c.dead
	c.mu.Unlock()
	if !dead { // another call reconnected meanwhile
		return s, nil
	}
	if c.redial == nil {
		return nil, &ServerError{Server: c.name, Op: "reconnect", Err: fmt.Errorf("%w: the session ended and this client does not reconnect", ErrUnavailable),
			Hint: "connect again; for an SDKTransport set Redial to allow reconnection"}
	}
	attempts := c.opts.MaxReconnects
	if attempts == 0 {
		attempts = 3
	}
	wait := c.opts.ReconnectBackoff
	if wait <= 0 {
		wait = 200 * time.Millisecond
	}
	var last error
	for i := range attempts {
		if i > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, context.Cause(ctx)
			case <-t.C:
			}
			wait = min(2*wait, 5*time.Second)
		}
		tr, err := c.redial()
		if err == nil {
			var ns *sdk.ClientSession
			if ns, err = c.connect(ctx, tr); err == nil {
				c.mu.Lock()
				old := c.session
				if c.closed {
					c.mu.Unlock()
					_ = ns.Close()
					return nil, &ServerError{Server: c.name, Op: "call", Err: errors.New("the client is closed")}
				}
				c.session, c.dead = ns, false
				c.mu.Unlock()
				if old != nil {
					_ = old.Close()
				}
				return ns, nil
			}
		}
		last = err
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
	}
	return nil, &ServerError{Server: c.name, Op: "reconnect", Err: fmt.Errorf("%w: %d connection attempts failed, the last with: %v", ErrUnavailable, attempts, last),
		Hint: "the server may be down; the next call tries again"}
}

// connectionLost reports whether err says the session or its connection is gone, rather than
// that the server answered with an error; and whether the request certainly did not reach the
// server, so that sending it again cannot run the tool twice.
func connectionLost(err error) (lost, unsent bool) {
	if errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, sdk.ErrConnectionClosed) {
		return true, true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true, op.Op == "dial"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) {
		return true, false
	}
	// Any other JSON-RPC error is the server's answer, except the SDK's "rejected by transport".
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return wire.Code == codeRejected, false
	}
	return false, false
}

// codeRejected is the JSON-RPC code the MCP SDK gives a message its transport could not deliver.
const codeRejected = -32005

// Tools lists the server's tools (following pagination) and returns them as trellis tools that
// call the server. Each call is an MCP tools/call on this client's session.
func (c *Client) Tools(ctx context.Context) ([]tool.Tool, error) {
	var tools []tool.Tool
	session, err := c.live(ctx)
	if err != nil {
		return nil, err
	}
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, &ServerError{Server: c.name, Op: "list tools", Err: err}
		}
		if len(c.opts.Include) > 0 && !contains(c.opts.Include, t.Name) {
			continue
		}
		rt, err := c.remote(t)
		if err != nil {
			return nil, err
		}
		tools = append(tools, rt)
	}
	return tools, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *Client) remote(t *sdk.Tool) (tool.Tool, error) {
	name := t.Name
	if c.opts.Prefix != "" {
		name = c.opts.Prefix + "_" + name
	}
	name = tool.SanitizeName(name)
	params, err := objectSchema(t.InputSchema)
	if err != nil {
		return nil, &ServerError{Server: c.name, Op: "load tool " + t.Name, Err: err}
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	rt := &remoteTool{client: c, remoteName: t.Name, spec: model.ToolSpec{Name: name, Description: desc, Parameters: params}}
	if !c.opts.NoValidate {
		// A schema this client cannot compile (a remote $ref, say) is left to the server to check.
		rt.schema, _ = tool.CompileSchema(params)
	}
	if t.OutputSchema != nil {
		rt.output, _ = json.Marshal(t.OutputSchema)
	}
	p := c.opts.Policy
	if !c.opts.Trusted && p.Timeout == 0 && len(p.Permissions) == 0 && !p.External {
		p.External = true
	}
	return tool.WithPolicy(rt, p), nil
}

// objectSchema encodes a server's input schema, adding "type":"object" when the server left it out.
func objectSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
		b, _ = json.Marshal(m)
	}
	return b, nil
}

// remoteTool is a tool of an MCP server.
type remoteTool struct {
	client     *Client
	remoteName string
	spec       model.ToolSpec
	schema     *tool.Schema // nil when not checked here
	output     json.RawMessage
}

func (r *remoteTool) Spec() model.ToolSpec          { return r.spec }
func (r *remoteTool) OutputSchema() json.RawMessage { return r.output }

func (r *remoteTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	var err error
	if r.schema != nil {
		args, err = r.schema.Validate(r.spec.Name, args)
	} else {
		args, err = tool.NormalizeArguments(r.spec.Name, args)
	}
	if err != nil {
		return nil, err
	}
	params := &sdk.CallToolParams{Name: r.remoteName, Arguments: args}
	if !r.client.opts.NoCallInfo {
		if info, ok := tool.CallInfoFrom(ctx); ok {
			params.Meta = metaOf(info)
		}
	}
	res, err := r.client.call(ctx, params)
	if err != nil {
		return nil, err
	}
	return fromCallResult(res), nil
}

// call sends a tools/call, reconnecting first when the session ended. A call that fails because
// the connection is gone marks the session dead; when its request cannot have reached the server
// it is sent once more on a new session.
func (c *Client) call(ctx context.Context, params *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	for attempt := 0; ; attempt++ {
		session, err := c.live(ctx)
		if err != nil {
			return nil, err
		}
		res, err := session.CallTool(ctx, params)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		lost, unsent := connectionLost(err)
		if lost {
			c.markDead(session)
		} else {
			c.mu.Lock()
			lost = c.session == session && c.dead // the watcher saw the session end
			c.mu.Unlock()
		}
		if lost && unsent && attempt == 0 && c.redial != nil {
			continue
		}
		se := &ServerError{Server: c.name, Op: "call tool " + params.Name, Err: err}
		switch {
		case lost && c.redial != nil:
			se.Hint = "the connection was lost during the call, so the tool may or may not have run; the next call reconnects"
		case lost:
			se.Hint = "the connection was lost, and this client does not reconnect"
		}
		return nil, se
	}
}

// fromCallResult turns an MCP tool result into a trellis one: text blocks join into Content,
// images become image parts, embedded text resources are inlined and other resources are named.
func fromCallResult(res *sdk.CallToolResult) *tool.Result {
	out := &tool.Result{IsError: res.IsError}
	var texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			out.Parts = append(out.Parts, message.Part{Type: message.PartImage,
				ImageURL: "data:" + c.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType})
			texts = append(texts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			texts = append(texts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				texts = append(texts, c.Resource.Text)
			} else if c.Resource != nil {
				texts = append(texts, fmt.Sprintf("[resource %s, %s, %d bytes]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		case *sdk.ResourceLink:
			texts = append(texts, fmt.Sprintf("[resource link %s: %s]", c.Name, c.URI))
		}
	}
	out.Content = strings.Join(texts, "\n")
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out.Structured = b
		}
	}
	return out
}

// ServerError says which MCP server failed, doing what.
type ServerError struct {
	Server string
	Op     string
	Err    error
	Hint   string
}

func (e *ServerError) Error() string {
	s := fmt.Sprintf("mcp: %s: %s: %v", e.Server, e.Op, e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *ServerError) Unwrap() error { return e.Err }
