package mcp_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/mcp"
)

func benchmarkCall(b *testing.B, c *mcp.Client) {
	tools, err := c.Tools(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var forecastTool tool.Tool
	for _, t := range tools {
		if t.Spec().Name == "forecast" {
			forecastTool = t
		}
	}
	raw := json.RawMessage(`{"city":"Lisbon"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := forecastTool.Call(ctx, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallInMemory measures a tools/call round trip through the SDK on an in-memory transport.
func BenchmarkCallInMemory(b *testing.B) {
	srv, err := mcp.NewServer(newExecutor(nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	c, err := mcp.Connect(context.Background(), mcp.SDKTransport{Transport: ct}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchmarkCall(b, c)
}

// BenchmarkCallHTTP measures a tools/call round trip over streamable HTTP on loopback.
func BenchmarkCallHTTP(b *testing.B) {
	srv, err := mcp.NewServer(newExecutor(nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(mcp.NewHTTPHandler(srv))
	defer hs.Close()
	c, err := mcp.Connect(context.Background(), mcp.HTTP{URL: hs.URL, NoStandaloneStream: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchmarkCall(b, c)
}
