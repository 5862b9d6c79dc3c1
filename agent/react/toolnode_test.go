package react_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

// shopState is an application's own state: the tools below know nothing of it.
type shopState struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	Cart     []string          `json:"cart" reduce:"append"`
	Total    float64           `json:"total" reduce:"sum"`
	Status   string            `json:"status"`
	Attempts int               `json:"attempts"`
}

type addArgs struct {
	SKU   string  `json:"sku"`
	Price float64 `json:"price"`
}

// cartLine is a tool's own struct whose JSON keys are state keys.
type cartLine struct {
	Cart  []string `json:"cart"`
	Total float64  `json:"total"`
}

func shopTools() []tool.Tool {
	add := tool.Must(tool.New("add_item", "Adds an item to the cart.", func(_ context.Context, a addArgs) (*tool.Result, error) {
		return &tool.Result{Content: "added " + a.SKU, Command: cartLine{Cart: []string{a.SKU}, Total: a.Price}}, nil
	}))
	checkout := tool.Must(tool.New("checkout", "Pays for the cart.", func(_ context.Context, _ struct{}) (*tool.Result, error) {
		// total arrives as a JSON number in a map and is converted to the field's type; attempts
		// is written even though it is zero.
		return &tool.Result{Content: "paid", Command: tool.Update{"status": "paid", "attempts": 0,
			"messages": []message.Message{message.Assistant("Receipt sent.")}}}, nil
	}))
	bad := tool.Must(tool.New("bad_update", "Writes keys the state lacks.", func(_ context.Context, _ struct{}) (*tool.Result, error) {
		return &tool.Result{Content: "oops", Command: tool.Update{"status": "x", "basket": 1, "colour": "red"}}, nil
	}))
	mistyped := tool.Must(tool.New("mistyped", "Writes a string to a number.", func(_ context.Context, _ struct{}) (*tool.Result, error) {
		return &tool.Result{Content: "oops", Command: tool.Update{"total": "lots"}}, nil
	}))
	return []tool.Tool{add, checkout, bad, mistyped}
}

func shopGraph(t *testing.T, m model.Model) *graph.Compiled[shopState] {
	t.Helper()
	tools, err := react.NewToolNode[shopState](shopTools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[shopState]()
	g.AddNode("model", func(ctx context.Context, s shopState) (shopState, error) {
		resp, err := agent.StreamModel(ctx, m, &model.Request{Messages: s.Messages})
		if err != nil {
			return shopState{}, err
		}
		return shopState{Messages: []message.Message{resp.Message}}, nil
	})
	g.AddNode("tools", tools)
	g.AddEdge(graph.START, "model")
	g.AddConditionalEdges("model", func(_ context.Context, s shopState) (string, error) {
		if last := s.Messages[len(s.Messages)-1]; len(last.ToolCalls) > 0 {
			return "tools", nil
		}
		return graph.END, nil
	}, nil)
	g.AddEdge("tools", "model")
	c, err := g.Compile(graph.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestToolNodeUpdatesACustomState(t *testing.T) {
	m := scripted.New(
		scripted.ToolCalls(call("a1", "add_item", `{"sku":"A-1","price":2.5}`), call("a2", "add_item", `{"sku":"B-2","price":4}`)),
		scripted.ToolCalls(call("c1", "checkout", `{}`)),
		scripted.Text("Done."),
	)
	out, err := shopGraph(t, m).Invoke(context.Background(), shopState{Messages: []message.Message{message.User("buy A-1 and B-2")}, Attempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.Cart, ",") != "A-1,B-2" || out.Total != 6.5 || out.Status != "paid" || out.Attempts != 0 {
		t.Errorf("state = cart %v total %v status %q attempts %d", out.Cart, out.Total, out.Status, out.Attempts)
	}
	// Each call is followed by its result; the checkout's extra message comes after its result.
	var roles []string
	for _, msg := range out.Messages {
		roles = append(roles, string(msg.Role)+":"+msg.ToolCallID+msg.Content)
	}
	want := "user:buy A-1 and B-2|assistant:|tool:a1added A-1|tool:a2added B-2|assistant:|tool:c1paid|assistant:Receipt sent.|assistant:Done."
	if got := strings.Join(roles, "|"); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

func TestToolNodeUnknownKeysAreNamed(t *testing.T) {
	m := scripted.New(scripted.ToolCalls(call("b1", "bad_update", `{}`)), scripted.Text("never"))
	_, err := shopGraph(t, m).Invoke(context.Background(), shopState{Messages: []message.Message{message.User("go")}})
	if err == nil || !strings.Contains(err.Error(), `unknown state keys "basket", "colour"`) || !strings.Contains(err.Error(), `"bad_update"`) ||
		!strings.Contains(err.Error(), "attempts, cart, messages, status, total") {
		t.Fatalf("err = %v", err)
	}
}

func TestToolNodeMistypedValueIsAnError(t *testing.T) {
	m := scripted.New(scripted.ToolCalls(call("x1", "mistyped", `{}`)), scripted.Text("never"))
	_, err := shopGraph(t, m).Invoke(context.Background(), shopState{Messages: []message.Message{message.User("go")}})
	if err == nil || !strings.Contains(err.Error(), `state key "total"`) || !strings.Contains(err.Error(), "float64") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewToolNodeNeedsAMessagesKey(t *testing.T) {
	type noMsgs struct {
		Notes []string `json:"notes"`
	}
	if _, err := react.NewToolNode[noMsgs](nil, nil); err == nil || !strings.Contains(err.Error(), `no key "messages"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := react.NewToolNode[shopState](nil, &react.ToolNodeOptions{MessagesKey: "cart"}); err == nil || !strings.Contains(err.Error(), `"cart"`) {
		t.Fatalf("err = %v", err)
	}
}

// The ReAct agent applies the same commands to its own state: an Update naming its keys, and a
// value of its state type.
func TestReActAppliesUpdateCommands(t *testing.T) {
	grade := tool.Must(tool.New("grade", "Grades.", func(_ context.Context, _ struct{}) (*tool.Result, error) {
		return &tool.Result{Content: "graded", Command: tool.Update{"structured_response": map[string]any{"grade": "A"}}}, nil
	}))
	note := tool.Must(tool.New("note", "Notes.", func(_ context.Context, _ struct{}) (*tool.Result, error) {
		return &tool.Result{Content: "noted", Command: react.State{Messages: []message.Message{message.Assistant("(noted)")}}}, nil
	}))
	m := scripted.New(scripted.ToolCalls(call("g1", "grade", `{}`), call("n1", "note", `{}`)), scripted.Text("ok"))
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{grade, note}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Structured) != `{"grade":"A"}` {
		t.Errorf("structured = %s", out.Structured)
	}
	if n := len(out.Messages); n != 6 || out.Messages[2].ToolCallID != "g1" || out.Messages[3].ToolCallID != "n1" || out.Messages[4].Content != "(noted)" {
		t.Errorf("messages = %+v", out.Messages)
	}
}
