package serverbench

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/client"
)

// The Go client (server/client) against the LangGraph.js API server: assistants, threads, a
// run waited for, a run streamed in two modes, the thread's state and history, the store, and a
// remote graph (client.Remote) running the peer's assistant as a node of a local graph.
func TestGoClientAgainstLangGraphJS(t *testing.T) {
	url := startPeer(t, 4, 4, 2, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	as, err := c.Assistants.Search(ctx, &client.Search{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(as, func(a client.Assistant) bool { return a.GraphID == ShortGraph }) {
		t.Fatalf("assistants %+v: no %q", as, ShortGraph)
	}
	th, err := c.Threads.Create(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.Runs.Wait(ctx, th.ThreadID, &client.RunRequest{AssistantID: ShortGraph, Input: map[string]any{"topic": "tea"}})
	if err != nil {
		t.Fatal(err)
	}
	var out ShortState
	if err := json.Unmarshal(raw, &out); err != nil || !slices.Equal(out.Steps, []string{"plan:tea", "act"}) {
		t.Fatalf("wait: %s (%v)", raw, err)
	}
	var events []string
	var last json.RawMessage
	for part, err := range c.Runs.Stream(ctx, th.ThreadID, &client.RunRequest{AssistantID: ShortGraph, Input: map[string]any{"topic": "milk"},
		StreamMode: []string{"values", "updates"}}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		events = append(events, part.Event)
		if part.Event == "values" {
			last = part.Data
		}
	}
	if !slices.Contains(events, "metadata") || !slices.Contains(events, "updates") || last == nil {
		t.Fatalf("stream events %v", events)
	}
	if err := json.Unmarshal(last, &out); err != nil || !slices.Equal(out.Steps, []string{"plan:tea", "act", "plan:milk", "act"}) {
		t.Fatalf("last values %s (%v)", last, err)
	}
	st, err := c.Threads.State(ctx, th.ThreadID, "")
	if err != nil || len(st.Next) != 0 {
		t.Fatalf("state %+v (%v)", st, err)
	}
	hist, err := c.Threads.History(ctx, th.ThreadID, 3)
	if err != nil || len(hist) != 3 {
		t.Fatalf("history: %d states (%v)", len(hist), err)
	}
	if err := c.Store.Put(ctx, []string{"bench", "client"}, "k", map[string]any{"v": 1}, 0); err != nil {
		t.Fatal(err)
	}
	item, err := c.Store.Get(ctx, []string{"bench", "client"}, "k")
	if err != nil || item.Value["v"] != float64(1) {
		t.Fatalf("store get %+v (%v)", item, err)
	}

	// A local graph whose node is the peer's assistant.
	g := graph.New[ShortState]()
	g.AddNode("remote", client.Remote[ShortState](c, ShortGraph, nil))
	g.AddEdge(graph.START, "remote").AddEdge("remote", graph.END)
	local, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := local.Invoke(ctx, ShortState{Topic: "soup"}, graph.WithThread("local-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Steps, "plan:soup") || !slices.Contains(got.Steps, "act") {
		t.Fatalf("remote node's update %+v", got)
	}
}
