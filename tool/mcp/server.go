package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

// ServerOptions configure [NewServer]. The zero value serves under the name "trellis", version
// "dev", with no per-call context beyond the call ID.
type ServerOptions struct {
	// Name and Version identify the server to clients; empty means "trellis" and "dev".
	Name, Version string
	// Instructions tell clients how to use the server's tools; empty means none.
	Instructions string
	// CallInfo builds the per-call context the tools see (user, tenant, permissions) from the MCP
	// request, for example from req.Extra.TokenInfo or req.Extra.Header on HTTP. Nil means an
	// empty CallInfo; the executor then refuses tools that require permissions. The call ID is
	// filled in afterwards.
	CallInfo func(ctx context.Context, req *sdk.CallToolRequest) (tool.CallInfo, error)
}

// NewServer returns an MCP server that offers the executor's tools. Each tools/call runs through
// the executor, so its timeouts, permission checks, tenant switches and result filters apply, and
// failures reach the client as results with isError set, as MCP asks. Serve the result with
// [NewHTTPHandler], [ServeStdio] or the SDK's own transports.
func NewServer(exec *tool.Executor, opts *ServerOptions) (*sdk.Server, error) {
	if exec == nil {
		return nil, errors.New("mcp: NewServer needs a *tool.Executor; build one with tool.NewExecutor")
	}
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "trellis"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: o.Name, Version: o.Version},
		&sdk.ServerOptions{Instructions: o.Instructions, Capabilities: &sdk.ServerCapabilities{}})
	for _, t := range exec.Tools() {
		spec := t.Spec()
		st := &sdk.Tool{Name: spec.Name, Description: spec.Description, InputSchema: spec.Parameters}
		if withOut, ok := t.(tool.OutputSchemaer); ok {
			if out := withOut.OutputSchema(); out != nil {
				st.OutputSchema = out
			}
		}
		srv.AddTool(st, handler(exec, spec.Name, o.CallInfo))
	}
	return srv, nil
}

func handler(exec *tool.Executor, name string, infoFn func(context.Context, *sdk.CallToolRequest) (tool.CallInfo, error)) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var info tool.CallInfo
		if infoFn != nil {
			var err error
			if info, err = infoFn(ctx, req); err != nil {
				res := &sdk.CallToolResult{}
				res.SetError(err)
				return res, nil
			}
		}
		id := "mcp-" + message.NewID()[:16]
		outs, err := exec.Run(tool.WithCallInfo(ctx, info), []message.ToolCall{{ID: id, Name: name, Arguments: req.Params.Arguments}})
		if err != nil {
			// The request was cancelled, or a tool stopped the run (an interrupt): a protocol error.
			return nil, err
		}
		return toCallResult(outs[0]), nil
	}
}

func toCallResult(o tool.Outcome) *sdk.CallToolResult {
	r := o.Result
	res := &sdk.CallToolResult{IsError: o.Message.IsError}
	text := o.Message.Content
	if text != "" || len(r.Parts) == 0 {
		res.Content = append(res.Content, &sdk.TextContent{Text: text})
	}
	for _, p := range r.Parts {
		switch p.Type {
		case message.PartText:
			res.Content = append(res.Content, &sdk.TextContent{Text: p.Text})
		case message.PartImage:
			if mime, data, ok := decodeDataURL(p.ImageURL); ok {
				res.Content = append(res.Content, &sdk.ImageContent{MIMEType: mime, Data: data})
			} else {
				res.Content = append(res.Content, &sdk.ResourceLink{URI: p.ImageURL, Name: "image", MIMEType: p.MIMEType})
			}
		}
	}
	if !res.IsError && len(r.Structured) > 0 && json.Valid(r.Structured) {
		res.StructuredContent = json.RawMessage(r.Structured)
	}
	return res
}

func decodeDataURL(u string) (mime string, data []byte, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", nil, false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return "", nil, false
	}
	mime, isB64 := strings.CutSuffix(meta, ";base64")
	if !isB64 {
		return "", nil, false
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, false
	}
	return mime, data, true
}

// NewHTTPHandler serves srv over MCP's streamable HTTP transport, one session per client. Mount it
// on the path clients are given, such as /mcp.
func NewHTTPHandler(srv *sdk.Server) http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

// ServeStdio serves srv on this process's stdin and stdout until the client disconnects or ctx
// ends. A program that does this must write nothing else to stdout.
func ServeStdio(ctx context.Context, srv *sdk.Server) error {
	return srv.Run(ctx, &sdk.StdioTransport{})
}
