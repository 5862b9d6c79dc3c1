package analyst_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// The memory tools, Question and Done.
func TestMemoryAndSignalTools(t *testing.T) {
	t.Parallel()
	a, _ := harness(t, analyst.Options{}, nil)
	tools, err := a.Tools()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	callTool := func(name, args string) (string, error) {
		res, err := tools[name].Call(ctx, []byte(args))
		if err != nil {
			return "", err
		}
		return res.Text(), nil
	}
	out, err := callTool("write_memory_tool", `{"namespace":"user_preferences","context_messages":["Please use footnotes and keep it concise"],"update_reason":"stylistic feedback"}`)
	if err != nil || !strings.Contains(out, "user_preferences: 2 facts (was 0)") {
		t.Fatalf("write_memory_tool: %q %v", out, err)
	}
	out, err = callTool("memory_search_tool", `{"namespace":"user_preferences","query":"footnotes"}`)
	if err != nil || !strings.Contains(out, "[CITATION] style: footnotes") || strings.Contains(out, "verbosity") {
		t.Fatalf("memory_search_tool: %q %v", out, err)
	}
	if _, err := callTool("memory_search_tool", `{"namespace":"secrets","query":"x"}`); err == nil || !strings.Contains(err.Error(), "must be one of \"user_profile\"") {
		t.Errorf("bad namespace: %v", err)
	}
	if _, err := callTool("write_memory_tool", `{"namespace":"episodic_memory","context_messages":[],"update_reason":"x"}`); err == nil || !strings.Contains(err.Error(), "context_messages is empty") {
		t.Errorf("no messages: %v", err)
	}
	if out, err := callTool("write_memory_tool", `{"namespace":"episodic_memory","context_messages":["met the Madrid council"],"update_reason":"note"}`); err != nil || !strings.Contains(out, "1 facts (was 0)") {
		t.Errorf("episodic note: %q %v", out, err)
	}
	if out, err := callTool("Done", `{"done":true}`); err != nil || out != `"done"` && out != "done" {
		t.Errorf("Done: %q %v", out, err)
	}
	if _, err := callTool("rag_tool", `{"query":"Voltra","top_k":99}`); err == nil || !strings.Contains(err.Error(), "top_k") {
		t.Errorf("rag_tool top_k 99: %v", err)
	}

	// Question pauses the run with an inbox request and returns the answer.
	type st struct {
		Answer string `json:"answer"`
	}
	g := graph.New[st]()
	g.AddNode("ask", func(ctx context.Context, s st) (st, error) {
		res, err := tools["Question"].Call(ctx, []byte(`{"content":"Which quarter should the report cover?"}`))
		if err != nil {
			return st{}, err
		}
		return st{Answer: res.Text()}, nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(ctx, st{}, graph.WithThread("q"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || !strings.Contains(toJSONString(ie.Interrupts[0].Value), "Which quarter") {
		t.Fatalf("Question did not pause: %v", err)
	}
	got, err := c.Invoke(ctx, st{}, graph.WithThread("q"), graph.Resume([]any{map[string]any{"type": "response", "args": "Q3 2026"}}))
	if err != nil || !strings.Contains(got.Answer, "Q3 2026") {
		t.Fatalf("answer %q %v", got.Answer, err)
	}
}
