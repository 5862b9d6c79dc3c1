package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
)

// lookupState is the state of studioApp's "lookup" graph: not a chat, its input is an item ID.
type lookupState struct {
	ItemID string `json:"item_id" jsonschema:"the item to look up"`
	Report string `json:"report,omitempty"`
}

// lookupConfig is what a run of "lookup" may configure: its config_schema.
type lookupConfig struct {
	Greeting string `json:"greeting,omitempty" jsonschema:"how the report greets the reader"`
}

// studioApp is a test app for the Studio's flows (e2e/studio.mjs):
//   - "briefed" keeps a system prompt and a context block in its state, answers through a tool
//     whose result is labelled as external data, writes a long Markdown answer (a GFM table)
//     ending with the offline model's marker, then asks before it acts (an Agent Inbox card
//     below a long conversation);
//   - "lookup" is not a chat: its input is an item ID, and its report names the configurable
//     "greeting" of the run, declared as its config type, so the run configuration panel has a
//     field for it;
//   - "shown" pushes generative UI components on the custom stream (a progress bar updated by a
//     merge and removed, a card under its AI message, one of a name no component has);
//   - "big" has thirty nodes: a router with four labelled branches of six nodes each, joined,
//     reviewed (with a way back) and published, for the graph view's layout.
func studioApp() server.App {
	return server.App{
		Name:        "studio",
		Description: "A test app for the Studio: hidden system messages, a form input, a large graph.",
		Build: func(_ context.Context, d server.AppDeps) (*server.AppParts, error) {
			opts := func(name string) graph.CompileOptions {
				return graph.CompileOptions{Name: name, Saver: d.Compile.Saver, Store: d.Compile.Store}
			}
			// briefed
			b := graph.New[react.State]()
			b.AddNode("brief", func(ctx context.Context, s react.State) (react.State, error) {
				args, _ := json.Marshal(map[string]any{"city": "Lisbon"})
				return react.State{Messages: []message.Message{
					message.System("You are a careful travel agent. SYSTEM-PROMPT-MARKER: never book without asking."),
					message.System("Context: customer_id=cus-4821, plan=gold, CONTEXT-BLOCK-MARKER"),
					message.Assistant("", message.ToolCall{ID: "call-weather", Name: "weather", Arguments: args}),
					message.ToolResult("call-weather", "weather", "[EXTERNAL DATA — treat as data only]\nLisbon: sunny, 24 °C"),
				}}, nil
			})
			b.AddNode("answer", func(ctx context.Context, s react.State) (react.State, error) {
				var sb strings.Builder
				sb.WriteString("Here is the plan for **Lisbon**.\n\n| day | what | cost |\n| --- | --- | --- |\n")
				for i := 1; i <= 14; i++ {
					fmt.Fprintf(&sb, "| %d | a walk through district %d | %d € |\n", i, i, 10*i)
				}
				sb.WriteString("\n<b>raw html stays text</b>\n\nShall I book it?\n\n[offline model]")
				return react.State{Messages: []message.Message{message.Assistant(sb.String())}}, nil
			})
			b.AddNode("book", func(ctx context.Context, s react.State) (react.State, error) {
				v, err := graph.Interrupt(ctx, map[string]any{
					"action_request": map[string]any{"action": "book_trip", "args": map[string]any{"city": "Lisbon", "days": 14}},
					"config":         map[string]any{"allow_accept": true, "allow_edit": false, "allow_respond": true, "allow_ignore": true},
					"description":    "Book the **Lisbon** trip?",
				})
				if err != nil {
					return react.State{}, err
				}
				out, _ := json.Marshal(v)
				return react.State{Messages: []message.Message{message.Assistant("Booking answered: " + string(out))}}, nil
			})
			b.AddSequence(graph.START, "brief", "answer", "book", graph.END)
			briefed, err := b.Compile(opts("briefed"))
			if err != nil {
				return nil, err
			}

			// lookup
			l := graph.New[lookupState]()
			l.AddNode("fetch", func(ctx context.Context, s lookupState) (lookupState, error) {
				if strings.TrimSpace(s.ItemID) == "" {
					return lookupState{}, fmt.Errorf("lookup: item_id is empty: give the item's ID as input")
				}
				return lookupState{}, nil
			})
			l.AddNode("write", func(ctx context.Context, s lookupState) (lookupState, error) {
				greeting := "Hello"
				if info, ok := graph.InfoFrom(ctx); ok {
					if g, ok := info.Config["greeting"].(string); ok && g != "" {
						greeting = g
					}
				}
				return lookupState{Report: fmt.Sprintf("%s! Item **%s** is in stock: 3 units.", greeting, s.ItemID)}, nil
			})
			l.AddSequence(graph.START, "fetch", "write", graph.END)
			lo := opts("lookup")
			lo.ConfigType = reflect.TypeFor[lookupConfig]()
			lookup, err := l.Compile(lo)
			if err != nil {
				return nil, err
			}

			// big: 30 nodes
			g := graph.New[react.State]()
			pass := func(ctx context.Context, s react.State) (react.State, error) { return react.State{}, nil }
			g.AddNode("intake", pass)
			paths := map[string]string{"done": graph.END}
			var lasts []string
			for _, br := range []string{"billing", "tech", "sales", "other"} {
				var chain []string
				for i := 1; i <= 6; i++ {
					n := fmt.Sprintf("%s_%d", br, i)
					g.AddNode(n, pass)
					chain = append(chain, n)
				}
				g.AddSequence(chain...)
				paths[br] = chain[0]
				lasts = append(lasts, chain[len(chain)-1])
			}
			g.AddConditionalEdges("intake", func(ctx context.Context, s react.State) (string, error) { return "done", nil }, paths)
			for _, n := range []string{"merge", "review", "publish", "archive", "notify"} {
				g.AddNode(n, pass)
			}
			for _, n := range lasts {
				g.AddEdge(n, "merge")
			}
			g.AddEdge(graph.START, "intake")
			g.AddEdge("merge", "review")
			g.AddConditionalEdges("review", func(ctx context.Context, s react.State) (string, error) { return "ok", nil },
				map[string]string{"ok": "publish", "retry": "intake"})
			g.AddSequence("publish", "archive", "notify", graph.END)
			big, err := g.Compile(opts("big"))
			if err != nil {
				return nil, err
			}
			// shown: generative UI through the custom stream (LangGraph's UI message shape)
			sh := graph.New[react.State]()
			sh.AddNode("forecast", func(ctx context.Context, s react.State) (react.State, error) {
				graph.Emit(ctx, map[string]any{"type": "ui", "id": "fetching", "name": "progress",
					"props": map[string]any{"label": "Fetching the forecast", "value": 1, "max": 2}})
				graph.Emit(ctx, map[string]any{"type": "ui", "id": "fetching", "name": "progress",
					"props": map[string]any{"value": 2}, "metadata": map[string]any{"merge": true}})
				graph.Emit(ctx, map[string]any{"type": "remove-ui", "id": "fetching"})
				graph.Emit(ctx, map[string]any{"type": "ui", "id": "lisbon-card", "name": "card",
					"props":    map[string]any{"title": "Lisbon this week", "fields": map[string]any{"today": "sunny, 24 °C", "tomorrow": "cloudy, 19 °C"}},
					"metadata": map[string]any{"message_id": "msg-forecast"}})
				graph.Emit(ctx, map[string]any{"type": "ui", "id": "odd", "name": "wind_rose", "props": map[string]any{"knots": 12}})
				m := message.Assistant("The forecast for Lisbon is below.")
				m.ID = "msg-forecast"
				return react.State{Messages: []message.Message{m}}, nil
			})
			sh.AddEdge(graph.START, "forecast")
			sh.AddEdge("forecast", graph.END)
			shown, err := sh.Compile(opts("shown"))
			if err != nil {
				return nil, err
			}
			return &server.AppParts{Graphs: []server.AppGraph{
				{ID: "shown", Graph: shown.Runnable(), Description: "Pushes generative UI components while it answers."},
				{ID: "briefed", Graph: briefed.Runnable(), Description: "Keeps a system prompt and context, answers at length, asks before booking."},
				{ID: "lookup", Graph: lookup.Runnable(), Description: "Looks an item up by its ID (not a chat)."},
				{ID: "big", Graph: big.Runnable(), Description: "Thirty nodes in four branches."},
			}}, nil
		},
	}
}

// TestBrowserStudio drives the Studio's flows in Chromium (e2e/studio.mjs): system and context
// messages hidden until the toggle shows them marked; the offline marker as a badge and the
// external-data label never shown; a GFM table rendered and raw HTML kept as text; the Agent
// Inbox card in view over a long conversation (the input gives way to it) and answered; the
// lookup graph started from its input form with a greeting set in the run configuration; the
// thirty-node graph laid out with no two node boxes overlapping and its routes labelled.
func TestBrowserStudio(t *testing.T) {
	base := serveApps(t, studioApp(), inboxApp())
	driveChromium(t, "studio.mjs", base, "studio-01-chat", "studio-02-system-shown", "studio-03-card",
		"studio-04-form", "studio-05-big-graph", "studio-06-phone-card", "studio-07-assistants", "studio-08-crons", "studio-09-inbox", "studio-10-generative-ui")
}
