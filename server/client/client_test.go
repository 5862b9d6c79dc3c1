package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/client"
)

// chatState is the state of the test assistant: a conversation.
type chatState struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
}

// helperGraph answers every message with a streamed "echo: ..."; a message that asks for approval
// first pauses for a person and puts the answer in the reply.
func helperGraph(d server.Deps) (graph.Runnable, error) {
	g := graph.New[chatState]()
	g.AddNode("answer", func(ctx context.Context, s chatState) (chatState, error) {
		last := s.Messages[len(s.Messages)-1].Text()
		reply := "echo: " + last
		if strings.Contains(last, "approve") {
			answer, err := graph.Interrupt(ctx, map[string]any{"question": "Approve " + last + "?"})
			if err != nil {
				return chatState{}, err
			}
			reply += " (approved: " + answer.(string) + ")"
		}
		graph.Emit(ctx, map[string]any{"progress": "writing"})
		id := message.NewID()
		for _, w := range strings.SplitAfter(reply, " ") {
			graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: id, Role: message.RoleAssistant, Content: w}})
		}
		m := message.Assistant(reply)
		m.ID = id
		return chatState{Messages: []message.Message{m}}, nil
	})
	g.AddEdge(graph.START, "answer")
	g.AddEdge("answer", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Saver: d.Saver}))
}

func startServer(t *testing.T) *client.Client {
	t.Helper()
	s, err := server.New(server.Config{Graphs: []server.GraphSpec{{ID: "helper", Description: "Echoes, asking first when told to.", Build: helperGraph}},
		DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	c, err := client.New(hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func userInput(text string) map[string]any {
	return map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}}
}

// TestClientCoversTheAPI drives assistants, threads, runs (wait, stream, background, join),
// crons and the store of a real trellis server.
func TestClientCoversTheAPI(t *testing.T) {
	t.Parallel()
	c := startServer(t)
	ctx := context.Background()

	as, err := c.Assistants.Search(ctx, &client.Search{GraphID: "helper"})
	if err != nil || len(as) != 1 {
		t.Fatalf("search: %v %+v", err, as)
	}
	mine, err := c.Assistants.Create(ctx, &client.AssistantRequest{GraphID: "helper", Name: "mine", Metadata: map[string]any{"team": "a"}})
	if err != nil || mine.AssistantID == "" || mine.Version != 1 {
		t.Fatalf("create assistant: %v %+v", err, mine)
	}
	if up, err := c.Assistants.Update(ctx, mine.AssistantID, &client.AssistantRequest{Name: "mine v2"}); err != nil || up.Version != 2 || up.Name != "mine v2" {
		t.Fatalf("update assistant: %v %+v", err, up)
	}
	if vs, err := c.Assistants.Versions(ctx, mine.AssistantID); err != nil || len(vs) != 2 {
		t.Fatalf("versions: %v %d", err, len(vs))
	}
	if sch, err := c.Assistants.Schemas(ctx, mine.AssistantID); err != nil || !strings.Contains(string(sch), "messages") {
		t.Fatalf("schemas: %v %s", err, sch)
	}

	th, err := c.Threads.Create(ctx, &client.ThreadRequest{Metadata: map[string]any{"user": "ana"}})
	if err != nil || th.ThreadID == "" {
		t.Fatalf("create thread: %v", err)
	}
	out, err := c.Runs.Wait(ctx, th.ThreadID, &client.RunRequest{AssistantID: "helper", Input: userInput("hello")})
	if err != nil || !strings.Contains(string(out), "echo: hello") {
		t.Fatalf("wait: %v %s", err, out)
	}

	var tokens []string
	var custom, values int
	for part, err := range c.Runs.Stream(ctx, th.ThreadID, &client.RunRequest{AssistantID: "helper", Input: userInput("stream me"),
		StreamMode: []string{"messages-tuple", "custom", "values"}}) {
		if err != nil {
			t.Fatal(err)
		}
		switch part.Event {
		case "messages":
			var tuple []map[string]any
			if err := json.Unmarshal(part.Data, &tuple); err != nil {
				t.Fatalf("messages event %s: %v", part.Data, err)
			}
			tokens = append(tokens, tuple[0]["content"].(string))
		case "custom":
			custom++
		case "values":
			values++
		}
	}
	if strings.Join(tokens, "") != "echo: stream me" || custom != 1 || values == 0 {
		t.Fatalf("stream: tokens %q, %d custom, %d values", tokens, custom, values)
	}

	st, err := c.Threads.State(ctx, th.ThreadID, "")
	if err != nil || !strings.Contains(string(st.Values), "echo: stream me") || st.Checkpoint.CheckpointID == "" {
		t.Fatalf("state: %v %+v", err, st)
	}
	hist, err := c.Threads.History(ctx, th.ThreadID, 0)
	if err != nil || len(hist) < 4 {
		t.Fatalf("history: %v, %d states", err, len(hist))
	}
	if _, err := c.Threads.UpdateState(ctx, th.ThreadID, &client.StateUpdate{Values: userInput("noted"), AsNode: "answer"}); err != nil {
		t.Fatalf("update state: %v", err)
	}
	if found, err := c.Threads.Search(ctx, &client.Search{Metadata: map[string]any{"user": "ana"}}); err != nil || len(found) != 1 {
		t.Fatalf("thread search: %v %d", err, len(found))
	}

	run, err := c.Runs.Create(ctx, th.ThreadID, &client.RunRequest{AssistantID: "helper", Input: userInput("later")})
	if err != nil || run.RunID == "" {
		t.Fatalf("background run: %v", err)
	}
	if joined, err := c.Runs.Join(ctx, th.ThreadID, run.RunID); err != nil || !strings.Contains(string(joined), "echo: later") {
		t.Fatalf("join: %v %s", err, joined)
	}
	if runs, err := c.Runs.List(ctx, th.ThreadID); err != nil || len(runs) != 3 {
		t.Fatalf("list runs: %v %d", err, len(runs))
	}

	cron, err := c.Crons.Create(ctx, th.ThreadID, &client.CronRequest{RunRequest: client.RunRequest{AssistantID: "helper", Input: userInput("tick")}, Schedule: "0 0 1 1 *"})
	if err != nil || cron.CronID == "" {
		t.Fatalf("cron: %v", err)
	}
	if crons, err := c.Crons.Search(ctx, "", th.ThreadID); err != nil || len(crons) != 1 {
		t.Fatalf("cron search: %v %d", err, len(crons))
	}
	if err := c.Crons.Delete(ctx, cron.CronID); err != nil {
		t.Fatal(err)
	}

	ns := []string{"users", "ana"}
	if err := c.Store.Put(ctx, ns, "prefs", map[string]any{"zone": "NP15"}, 0); err != nil {
		t.Fatal(err)
	}
	if it, err := c.Store.Get(ctx, ns, "prefs"); err != nil || it.Value["zone"] != "NP15" {
		t.Fatalf("store get: %v %+v", err, it)
	}
	if items, err := c.Store.Search(ctx, []string{"users"}, &client.StoreSearch{Filter: map[string]any{"zone": "NP15"}}); err != nil || len(items) != 1 {
		t.Fatalf("store search: %v %d", err, len(items))
	}
	if spaces, err := c.Store.Namespaces(ctx, nil, 0); err != nil || !slices.ContainsFunc(spaces, func(n []string) bool { return slices.Equal(n, ns) }) {
		t.Fatalf("namespaces: %v %v", err, spaces)
	}
	if err := c.Store.Delete(ctx, ns, "prefs"); err != nil {
		t.Fatal(err)
	}
	if it, err := c.Store.Get(ctx, ns, "prefs"); it != nil || err != nil {
		t.Fatalf("deleted item: %+v, %v; want nil and no error", it, err)
	}

	if err := c.Threads.Delete(ctx, th.ThreadID); err != nil {
		t.Fatal(err)
	}
	_, err = c.Threads.Get(ctx, th.ThreadID)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Detail == "" {
		t.Fatalf("deleted thread: err = %v, want a 404 with the server's detail", err)
	}
}

// TestClientErrors: a bad URL, a server that is not there, and a refused request each say so.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	if _, err := client.New("localhost:2024", nil); err == nil {
		t.Fatal("a URL without a scheme was accepted")
	}
	hs := httptest.NewServer(nil)
	url := hs.URL
	hs.Close()
	c, _ := client.New(url, nil)
	_, err := c.Threads.Create(context.Background(), nil)
	var ue *client.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want UnreachableError", err)
	}
	live := startServer(t)
	_, err = live.Runs.Wait(context.Background(), "", &client.RunRequest{AssistantID: "no-such-assistant", Input: userInput("x")})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status/100 != 4 || !strings.Contains(ae.Error(), "no-such-assistant") {
		t.Fatalf("err = %v, want a 4xx naming the assistant", err)
	}
}

// TestRemoteNode: a local graph runs the server's assistant as a node; its tokens and custom
// events stream locally, its interrupt pauses the local graph, and the local resume resumes it.
func TestRemoteNode(t *testing.T) {
	t.Parallel()
	c := startServer(t)
	g := graph.New[chatState]()
	g.AddNode("remote", client.Remote[chatState](c, "helper", nil))
	g.AddEdge(graph.START, "remote")
	g.AddEdge("remote", graph.END)
	local, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, thread := context.Background(), graph.WithThread("local-1")

	var tokens strings.Builder
	var customs int
	var final chatState
	for ev, err := range local.Stream(ctx, chatState{Messages: []message.Message{message.User("hi there")}}, thread,
		graph.WithStreamModes(graph.ModeMessages, graph.ModeCustom, graph.ModeValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.ModeMessages:
			tokens.WriteString(ev.Data.(graph.MessageChunk).Message.Text())
		case graph.ModeCustom:
			customs++
		case graph.ModeValues:
			final = ev.Data.(chatState)
		}
	}
	if tokens.String() != "echo: hi there" || customs != 1 {
		t.Fatalf("local stream: tokens %q, %d custom events", tokens.String(), customs)
	}
	if last := final.Messages[len(final.Messages)-1]; last.Role != message.RoleAssistant || last.Text() != "echo: hi there" {
		t.Fatalf("local state ends with %+v", last)
	}

	_, err = local.Invoke(ctx, chatState{Messages: []message.Message{message.User("please approve the order")}}, thread)
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || !strings.Contains(mustJSON(ie.Interrupts[0].Value), "Approve please approve the order?") {
		t.Fatalf("err = %v, want the remote interrupt surfaced locally", err)
	}
	out, err := local.Invoke(ctx, chatState{}, thread, graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Messages[len(out.Messages)-1].Text(); last != "echo: please approve the order (approved: yes)" {
		t.Fatalf("after the resume the local state ends with %q", last)
	}
	if n := len(out.Messages); n != 4 {
		t.Fatalf("local conversation has %d messages, want 4 (two turns)", n)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
