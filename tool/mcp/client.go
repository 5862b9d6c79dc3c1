package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

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

// SDKTransport uses a transport of the MCP Go SDK directly.
type SDKTransport struct {
	Transport sdk.Transport
	// Name labels the server in errors; empty means "mcp server".
	Name string
}

func (s SDKTransport) transport() (sdk.Transport, string, error) {
	if s.Transport == nil {
		return nil, "", errors.New("mcp: SDKTransport.Transport is nil")
	}
	name := s.Name
	if name == "" {
		name = "mcp server"
	}
	return s.Transport, name, nil
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
}

// Client is a connection to one MCP server. It is safe for concurrent use; close it when done.
type Client struct {
	session *sdk.ClientSession
	name    string
	opts    Options
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
	c := &Client{name: name}
	if opts != nil {
		c.opts = *opts
	}
	impl := &sdk.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion}
	if impl.Name == "" {
		impl.Name = "trellis"
	}
	if impl.Version == "" {
		impl.Version = "dev"
	}
	session, err := sdk.NewClient(impl, nil).Connect(ctx, tr, nil)
	if err != nil {
		return nil, &ServerError{Server: name, Op: "connect", Err: err,
			Hint: "check that the server starts and speaks MCP on this transport"}
	}
	c.session = session
	return c, nil
}

// Close ends the session (and stops a [Command] server).
func (c *Client) Close() error { return c.session.Close() }

// Session returns the underlying SDK session, for features beyond tools (resources, prompts).
func (c *Client) Session() *sdk.ClientSession { return c.session }

// Tools lists the server's tools (following pagination) and returns them as trellis tools that
// call the server. Each call is an MCP tools/call on this client's session.
func (c *Client) Tools(ctx context.Context) ([]tool.Tool, error) {
	var tools []tool.Tool
	for t, err := range c.session.Tools(ctx, nil) {
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
	res, err := r.client.session.CallTool(ctx, &sdk.CallToolParams{Name: r.remoteName, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, &ServerError{Server: r.client.name, Op: "call tool " + r.remoteName, Err: err}
	}
	return fromCallResult(res), nil
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
