package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

func BenchmarkFuncCall(b *testing.B) {
	type args struct {
		City  string `json:"city"`
		Units string `json:"units,omitempty" enum:"metric,imperial" default:"metric"`
		Days  int    `json:"days" minimum:"1" maximum:"14"`
	}
	f := tool.Must(tool.New("forecast", "", func(ctx context.Context, a args) (string, error) { return a.City, nil }))
	raw := json.RawMessage(`{"city":"Lisbon","units":"imperial","days":3}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Call(ctx, raw); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkRun(b *testing.B, n int, filters []tool.Filter) {
	echo := tool.Must(tool.New("echo", "", func(ctx context.Context, a struct {
		Text string `json:"text"`
	}) (string, error) {
		return a.Text, nil
	}))
	exec, err := tool.NewExecutor([]tool.Tool{echo}, &tool.ExecutorOptions{Filters: filters})
	if err != nil {
		b.Fatal(err)
	}
	calls := make([]message.ToolCall, n)
	for i := range calls {
		calls[i] = message.ToolCall{ID: "c", Name: "echo", Arguments: json.RawMessage(`{"text":"some tool output of a modest size"}`)}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := exec.Run(ctx, calls); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRun1(b *testing.B) { benchmarkRun(b, 1, nil) }
func BenchmarkRun8(b *testing.B) { benchmarkRun(b, 8, nil) }
func BenchmarkRun8Filtered(b *testing.B) {
	r, err := tool.NewRedactor(&tool.RedactOptions{Secrets: []string{"a-known-secret"}})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkRun(b, 8, []tool.Filter{r, tool.LabelExternal(tool.LabelOptions{All: true})})
}

func BenchmarkRedact4KB(b *testing.B) {
	r, err := tool.NewRedactor(&tool.RedactOptions{Secrets: []string{"a-known-secret", "another-secret-value"}})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, text string }{
		{"plain", strings.Repeat("The quarterly report lists revenue by region and product line. ", 64)},
		// Words that wake the key=value and URL patterns, as JSON API responses often have.
		{"keywords", strings.Repeat(`{"token_count": 12, "url": "https://example.com/a", "secretary": "Bo"} `, 56)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Redact(bc.text)
			}
		})
	}
}
