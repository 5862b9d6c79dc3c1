package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/mcp"
)

// Serve tools over MCP and load them back as trellis tools, here over an in-memory transport.
func Example() {
	ctx := context.Background()
	type addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	add := tool.Must(tool.New("add", "Adds two numbers.", func(ctx context.Context, a addArgs) (string, error) {
		return fmt.Sprint(a.A + a.B), nil
	}))
	exec, err := tool.NewExecutor([]tool.Tool{add}, nil)
	if err != nil {
		panic(err)
	}
	srv, err := mcp.NewServer(exec, nil)
	if err != nil {
		panic(err)
	}
	clientSide, serverSide := sdk.NewInMemoryTransports()
	session, err := srv.Connect(ctx, serverSide, nil)
	if err != nil {
		panic(err)
	}
	defer session.Close()

	c, err := mcp.Connect(ctx, mcp.SDKTransport{Transport: clientSide}, &mcp.Options{Prefix: "calc"})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		panic(err)
	}
	res, err := tools[0].Call(ctx, json.RawMessage(`{"a":2,"b":40}`))
	fmt.Println(tools[0].Spec().Name, res.Text(), err)
	// Output:
	// calc_add 42 <nil>
}
