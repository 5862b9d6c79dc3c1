// Package mcp connects trellis tools with the Model Context Protocol, using the official MCP Go
// SDK (github.com/modelcontextprotocol/go-sdk).
//
// # Using an MCP server's tools
//
// [Connect] reaches a server over stdio ([Command]), streamable HTTP ([HTTP]) or any SDK transport
// ([SDKTransport]); [Client.Tools] returns its tools as [tool.Tool] values, ready for a
// [tool.Executor]:
//
//	c, err := mcp.Connect(ctx, mcp.Command{Path: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}, &mcp.Options{Prefix: "demo"})
//	...
//	defer c.Close()
//	tools, err := c.Tools(ctx)
//
// Arguments are checked against each tool's schema before they are sent, so the model gets the
// same precise errors as for a local tool. Results are marked External by default, so
// [tool.LabelExternal] labels them as data. Each call sends the caller's tool.CallInfo (user,
// tenant, thread, run and call IDs) in the request's _meta ([MetaUser] and the others;
// [CallInfoFromMeta] reads them on a trusted server). A client whose session ended reconnects on
// the next call, with backoff, and fails with [ErrUnavailable] after Options.MaxReconnects
// attempts.
//
// # Serving tools over MCP
//
// [NewServer] offers the tools of a [tool.Executor] to MCP clients: every call goes through the
// executor, with its timeouts, permission checks and filters. Serve it over HTTP with
// [NewHTTPHandler] or on stdin and stdout with [ServeStdio]. To serve a graph as a tool, wrap the
// graph's invocation in a tool (for example with [tool.New]) and serve that.
package mcp
