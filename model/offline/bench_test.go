package offline_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

func BenchmarkStructuredFromToolResult(b *testing.B) {
	m := offline.New(nil)
	call := message.ToolCall{ID: "c1", Name: "get_listing", Arguments: json.RawMessage(`{}`)}
	req := &model.Request{Messages: []message.Message{
		message.User("Analyse this listing"), message.Assistant("", call),
		message.ToolResult("c1", "get_listing", `{"listing":{"title":"T2 in Alfama","price":"245.000 €","area_m2":78,"condition":"Needs Renovation","features":["balcony","river view"],"address":{"city":"Lisboa","postcode":"1100-001"}}}`),
	}, Schema: &model.Schema{Name: "out", JSON: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"price":{"type":"number"},"area_m2":{"type":"integer"},"condition":{"type":"string","enum":["new","good","needs_renovation"]},"features":{"type":"array","items":{"type":"string"}},"address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},"required":["title","price","area_m2","condition","features","address"]}`)}}
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Generate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDescribeImagePNG(b *testing.B) {
	part := message.Part{Type: message.PartImage, ImageURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngWithText(b, "room", "kitchen", "Description", "condition: good\nfeatures: island, gas hob"))}
	for b.Loop() {
		if _, err := offline.DescribeImage(part); err != nil {
			b.Fatal(err)
		}
	}
}
