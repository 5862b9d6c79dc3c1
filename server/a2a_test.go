package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// chatState is the state of the A2A test graph "chat".
type chatState struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
}

// chatGate holds the chat graph's node on the text "hold" until released.
type chatGate struct {
	started chan struct{}
	release chan struct{}
}

// buildChat is a one-node chat: "ask me" interrupts with a question and answers with the
// resume value; "hold" waits on the gate; anything else is echoed.
func buildChat(gate *chatGate) func(Deps) (graph.Runnable, error) {
	return func(deps Deps) (graph.Runnable, error) {
		g := graph.New[chatState]()
		g.AddNode("reply", func(ctx context.Context, s chatState) (chatState, error) {
			text := ""
			if n := len(s.Messages); n > 0 {
				text = s.Messages[n-1].Text()
			}
			switch text {
			case "ask me":
				v, err := graph.Interrupt(ctx, "which color?")
				if err != nil {
					return chatState{}, err
				}
				return chatState{Messages: []message.Message{message.Assistant("you chose " + v.(string))}}, nil
			case "hold":
				select {
				case gate.started <- struct{}{}:
				case <-ctx.Done():
					return chatState{}, ctx.Err()
				}
				select {
				case <-gate.release:
				case <-ctx.Done():
					return chatState{}, ctx.Err()
				}
			}
			answer := message.Assistant("echo: " + text)
			if text == "streamed" {
				// As a streaming model does: the answer's tokens first, then the message.
				answer.ID = "streamed-answer"
				for _, tok := range []string{"echo", ": ", "streamed"} {
					chunk := message.Assistant(tok)
					chunk.ID = answer.ID
					graph.EmitMessage(ctx, graph.MessageChunk{Message: chunk})
				}
			}
			return chatState{Messages: []message.Message{answer}}, nil
		})
		g.AddEdge(graph.START, "reply").AddEdge("reply", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Name: "chat", Saver: deps.Saver}))
	}
}

func a2aSetup(t *testing.T, keys map[string]Principal, perUser ...bool) (*bundle, *chatGate) {
	t.Helper()
	gate := &chatGate{started: make(chan struct{}, 4), release: make(chan struct{})}
	t.Cleanup(func() { close(gate.release) })
	b := setup(t, setupOpts{cfg: Config{Auth: AuthConfig{APIKeys: keys, PerUser: len(perUser) > 0 && perUser[0]}}, extra: []GraphSpec{
		{ID: "chat", Description: "echoes, or asks a question", Build: buildChat(gate)},
		{ID: "steps", Description: "three steps in a row", Build: buildSteps},
	}})
	return b, gate
}

// a2aClient reads an assistant's agent card with key and opens the A2A Go SDK's client on it.
func a2aClient(t *testing.T, b *bundle, key, assistant string) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	var card a2a.AgentCard
	b.token = key
	b.mustDo("GET", "/.well-known/agent-card.json?assistant_id="+url.QueryEscape(assistant), nil, &card, 200)
	hc := &http.Client{Transport: headerTransport{"x-api-key", key}}
	c, err := a2aclient.NewFromCard(context.Background(), &card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("client on the card: %v", err)
	}
	return c, &card
}

func textMessage(text string) *a2a.MessageSendParams {
	return &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})}
}

func sendTask(t *testing.T, ctx context.Context, c *a2aclient.Client, p *a2a.MessageSendParams) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, p)
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("message/send answered %T, want a task", res)
	}
	return task
}

func artifactText(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) == 0 {
		t.Fatalf("task %s (%s) has artifacts %+v", task.ID, task.Status.State, task.Artifacts)
	}
	p, ok := task.Artifacts[0].Parts[0].(a2a.TextPart)
	if !ok {
		t.Fatalf("the artifact's part is a %T", task.Artifacts[0].Parts[0])
	}
	return p.Text
}

// TestA2AAgent drives /a2a/{assistant_id} with the official A2A Go SDK's client: the agent
// card, message/send on a new and a continued context (a thread), an interrupt surfaced as an
// input-required task and resumed by the next message, message/stream, tasks/cancel, and
// the tenant's scoping.
func TestA2AAgent(t *testing.T) {
	t.Parallel()
	const keyA, keyB = "a2a-key-a-0123456789abcdef", "a2a-key-b-0123456789abcdef"
	b, gate := a2aSetup(t, map[string]Principal{keyA: {User: "a", Tenant: "t"}, keyB: {User: "b", Tenant: "u"}})
	c, card := a2aClient(t, b, keyA, "chat")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if card.Name != "chat" || card.Description != "echoes, or asks a question" || !card.Capabilities.Streaming ||
		card.PreferredTransport != a2a.TransportProtocolJSONRPC || !strings.HasPrefix(card.URL, b.http.URL+"/a2a/") || len(card.Skills) != 1 {
		t.Errorf("agent card %+v", card)
	}
	b.mustDo("GET", "/.well-known/agent-card.json", nil, nil, 400)
	b.mustDo("GET", "/.well-known/agent-card.json?assistant_id=nope", nil, nil, 404)
	b.token = ""
	b.mustDo("GET", "/.well-known/agent-card.json?assistant_id=chat", nil, nil, 401)

	// A new context: a thread of the tenant's, whose ID is the contextId.
	task := sendTask(t, ctx, c, textMessage("hello"))
	if task.Status.State != a2a.TaskStateCompleted || artifactText(t, task) != "echo: hello" || task.ContextID == "" {
		t.Fatalf("first task %+v", task)
	}
	next := textMessage("again")
	next.Message.ContextID = task.ContextID
	task2 := sendTask(t, ctx, c, next)
	if task2.ContextID != task.ContextID || task2.ID == task.ID || artifactText(t, task2) != "echo: again" {
		t.Fatalf("second task %+v", task2)
	}
	var state struct {
		Values struct {
			Messages []map[string]any `json:"messages"`
		} `json:"values"`
	}
	b.token = keyA
	b.mustDo("GET", "/threads/"+task.ContextID+"/state", nil, &state, 200)
	if len(state.Values.Messages) != 4 {
		t.Errorf("the context's thread has %d messages, want 4", len(state.Values.Messages))
	}
	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || artifactText(t, got) != "echo: hello" {
		t.Errorf("tasks/get %+v, %v", got, err)
	}

	// An interrupt: input-required with the question, resumed by the next message of the task.
	ask := sendTask(t, ctx, c, textMessage("ask me"))
	if ask.Status.State != a2a.TaskStateInputRequired || ask.Status.Message == nil {
		t.Fatalf("the interrupted task %+v", ask)
	}
	if q, ok := ask.Status.Message.Parts[0].(a2a.TextPart); !ok || q.Text != "which color?" {
		t.Errorf("the question %+v", ask.Status.Message.Parts)
	}
	if got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: ask.ID}); err != nil || got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("tasks/get of the interrupted task %+v, %v", got, err)
	}
	answer := textMessage("blue")
	answer.Message.TaskID, answer.Message.ContextID = ask.ID, ask.ContextID
	done := sendTask(t, ctx, c, answer)
	if done.ID != ask.ID || done.Status.State != a2a.TaskStateCompleted || artifactText(t, done) != "you chose blue" {
		t.Fatalf("the resumed task %+v", done)
	}
	if got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: ask.ID}); err != nil || got.Status.State != a2a.TaskStateCompleted || artifactText(t, got) != "you chose blue" {
		t.Errorf("tasks/get of the resumed task %+v, %v", got, err)
	}
	// A finished task takes no more input.
	if _, err := c.SendMessage(ctx, answer); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("a message to a completed task: %v", err)
	}

	// message/stream: the task, working, the model's tokens as artifact chunks, the node's
	// update, the whole artifact, the final status.
	var kinds []string
	var final *a2a.TaskStatusUpdateEvent
	var streamed, whole string
	var tokens []string
	for ev, err := range c.SendStreamingMessage(ctx, textMessage("streamed")) {
		if err != nil {
			t.Fatalf("message/stream: %v", err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			kinds = append(kinds, "task:"+string(e.Status.State))
		case *a2a.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(e.Status.State))
			if e.Final {
				final = e
			}
			if e.Status.Message != nil {
				if p, ok := e.Status.Message.Parts[0].(a2a.TextPart); ok {
					streamed = p.Text
				}
			}
		case *a2a.TaskArtifactUpdateEvent:
			text := e.Artifact.Parts[0].(a2a.TextPart).Text
			switch {
			case e.LastChunk && !e.Append:
				kinds = append(kinds, "artifact")
				whole = text
			case !e.LastChunk && e.Append == (len(tokens) > 0):
				kinds = append(kinds, "token")
				tokens = append(tokens, text)
			default:
				t.Errorf("artifact update %+v", e)
			}
		}
	}
	want := "task:submitted status:working token token token status:working artifact status:completed"
	if strings.Join(kinds, " ") != want || final == nil || streamed != "echo: streamed" {
		t.Errorf("stream events %q (final %+v, text %q), want %q", strings.Join(kinds, " "), final, streamed, want)
	}
	if strings.Join(tokens, "|") != "echo|: |streamed" || whole != "echo: streamed" {
		t.Errorf("the result streamed as tokens %q, then whole %q", tokens, whole)
	}

	// tasks/cancel of a working task.
	noWait := textMessage("hold")
	noWait.Config = &a2a.MessageSendConfig{Blocking: new(false)}
	held := sendTask(t, ctx, c, noWait)
	if held.Status.State != a2a.TaskStateSubmitted {
		t.Errorf("a non-blocking send answered %s", held.Status.State)
	}
	select {
	case <-gate.started:
	case <-ctx.Done():
		t.Fatal("the held run did not start")
	}
	canceled, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: held.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel: %+v, %v", canceled, err)
	}
	if _, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: held.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("canceling a canceled task: %v", err)
	}
	if _, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("tasks/get of no task: %v", err)
	}

	// Another tenant sees none of it: not the task, not the context.
	cb, _ := a2aClient(t, b, keyB, "chat")
	if _, err := cb.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another tenant's tasks/get: %v", err)
	}
	other := textMessage("mine?")
	other.Message.ContextID = task.ContextID
	if _, err := cb.SendMessage(ctx, other); err == nil {
		t.Error("another tenant ran on the tenant's context")
	}

	// A graph without messages takes data parts and answers with its values as data.
	cs, _ := a2aClient(t, b, keyA, "steps")
	res := sendTask(t, ctx, cs, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"topic": "data"}})})
	if d, ok := res.Artifacts[0].Parts[0].(a2a.DataPart); !ok || d.Data["topic"] != "data" || len(d.Data["steps"].([]any)) != 3 {
		t.Errorf("the steps task's artifact %+v", res.Artifacts[0].Parts)
	}
	if _, err := cs.SendMessage(ctx, textMessage("text")); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("text to a graph without messages: %v", err)
	}
}

// TestA2APerUser: with per-user scoping, another user of the tenant sees neither the tasks nor
// the contexts of a user, as on every route of the API.
func TestA2APerUser(t *testing.T) {
	t.Parallel()
	const ann, bob = "a2a-key-ann-0123456789abcdef", "a2a-key-bob-0123456789abcdef"
	b, _ := a2aSetup(t, map[string]Principal{ann: {User: "ann", Tenant: "t"}, bob: {User: "bob", Tenant: "t"}}, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ca, _ := a2aClient(t, b, ann, "chat")
	cb, _ := a2aClient(t, b, bob, "chat")
	asked := sendTask(t, ctx, ca, textMessage("ask me"))
	if asked.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ann's task %+v", asked)
	}
	if _, err := cb.GetTask(ctx, &a2a.TaskQueryParams{ID: asked.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob read ann's task: %v", err)
	}
	if _, err := cb.CancelTask(ctx, &a2a.TaskIDParams{ID: asked.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob canceled ann's task: %v", err)
	}
	answer := textMessage("red")
	answer.Message.TaskID, answer.Message.ContextID = asked.ID, asked.ContextID
	if _, err := cb.SendMessage(ctx, answer); err == nil {
		t.Error("bob answered ann's task")
	}
	answer.Message.TaskID = ""
	if _, err := cb.SendMessage(ctx, answer); err == nil {
		t.Error("bob ran on ann's context")
	}
	if done := sendTask(t, ctx, ca, answer); done.ID != asked.ID || artifactText(t, done) != "you chose red" {
		t.Errorf("ann's answer (context only, no taskId) %+v", done)
	}
}

// TestA2AJSClient drives the A2A endpoint with the official A2A JavaScript SDK's client
// (@a2a-js/sdk, pinned with its lock in testdata/a2ajs): send, stream, get, cancel, and an
// interrupt answered as input-required and resumed. It needs node and the installed packages:
// npm ci --prefix server/testdata/a2ajs
func TestA2AJSClient(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join("testdata", "a2ajs"))
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the A2A JavaScript client test needs Node.js 20 or later")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk")); err != nil {
		t.Skipf("the A2A JavaScript SDK is not installed; run: npm ci --prefix %s", filepath.Join("server", "testdata", "a2ajs"))
	}
	key := "a2a-js-key-0123456789abcdef"
	b, gate := a2aSetup(t, map[string]Principal{key: {User: "js", Tenant: "t"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The script holds a run and cancels it: let the held node start, release nothing.
	go func() {
		for {
			select {
			case <-gate.started:
			case <-ctx.Done():
				return
			}
		}
	}()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), b.http.URL, key)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("node output:\n%s", out)
	if err != nil {
		t.Fatalf("the A2A client script failed: %v", err)
	}
	_, ctxID, ok := strings.Cut(strings.TrimSpace(string(out)), "a2a e2e: ok ")
	if !ok {
		t.Fatal("the A2A client script did not finish")
	}
	// The context the script talked in is a thread of the tenant's, with both turns.
	var state struct {
		Values struct {
			Messages []map[string]any `json:"messages"`
		} `json:"values"`
	}
	b.token = key
	b.mustDo("GET", "/threads/"+ctxID+"/state", nil, &state, 200)
	if len(state.Values.Messages) != 4 {
		t.Errorf("the script's context has %d messages, want 4", len(state.Values.Messages))
	}
}
