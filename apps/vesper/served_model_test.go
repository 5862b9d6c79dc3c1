package vesper

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/provider"
	"github.com/trellis-go/trellis/server"
)

// With TRELLIS_MODEL set, the served assistant runs on that model: over
// the WebSocket, the session is titled by it, it routes, the PER agent
// calls its tool in a loop, and it writes the answer from the formatted
// health table; the deep links are added by the rules.
func TestServedWithAConfiguredModel(t *testing.T) {
	answer := "Nazareth Solar is in Stage 4; its interconnection (Phase II study delayed) is the critical path item."
	srv := modeltest.NewOpenAI(t,
		modeltest.Reply{Text: "Nazareth Solar health"}, // the session's title
		modeltest.Reply{Text: `{"intent":"project_execution","agents":["per_agent"],"filters":{"project_name":"nazareth solar"}}`},
		modeltest.Reply{ToolCalls: []message.ToolCall{{ID: "c1", Name: "get_project_health", Arguments: json.RawMessage(`{"project_name":"Nazareth Solar"}`)}}},
		modeltest.Reply{Text: "Interconnection is red."},
		modeltest.Reply{Text: answer},
	)
	o, streamed := askServed(t, serveOnModel(t, srv.URL), "What is the health status of Nazareth Solar?")
	if !strings.HasPrefix(o.Content, answer) || !strings.Contains(o.Content, "**Related Reports**") || o.Content != streamed {
		t.Fatalf("answer %q\nstreamed %q", o.Content, streamed)
	}
	if o.Intent != "project_execution" || len(o.Links) == 0 {
		t.Fatalf("intent %q links %+v", o.Intent, o.Links)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("the model got %d requests, want 5 (title, route, tool call, agent answer, answer)", len(reqs))
	}
	if !strings.Contains(string(reqs[4].Raw), "Phase II study delayed") || !strings.Contains(string(reqs[3].Raw), "Phase II study delayed") {
		t.Errorf("the agent and the writer were not shown the health table")
	}
}

// A run through the API on a configured model counts its tokens against the run's budget:
// with config.max_tokens of 1, the first call's prompt alone does not fit, so the call is refused
// before anything is sent and the run ends with BudgetExceeded.
func TestServedModelKeepsTheTokenBudget(t *testing.T) {
	srv := modeltest.NewOpenAI(t,
		modeltest.Reply{Text: `{"intent":"project_execution","agents":["per_agent"],"filters":{"project_name":"nazareth solar"}}`},
		modeltest.Reply{Text: "Interconnection is red."},
		modeltest.Reply{Text: "Nazareth Solar is in Stage 4."},
	)
	hs := serveOnModel(t, srv.URL)
	body := `{"assistant_id":"vesper","input":{"messages":[{"role":"user","content":"What is the health status of Nazareth Solar?"}]},"config":{"max_tokens":1}}`
	resp, err := http.Post(hs.URL+"/runs/wait", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		} `json:"__error__"`
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, data, err)
	}
	if out.Error.Error != "BudgetExceeded" || !strings.Contains(out.Error.Message, "max_tokens") {
		t.Fatalf("the run was not stopped by its token budget: %d %s", resp.StatusCode, data)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the model got %d requests, want none", n)
	}
}

// serveOnModel serves the vesper app in dev mode on the OpenAI-compatible model at modelURL,
// configured as `trellis serve` configures it from TRELLIS_MODEL, until the test ends.
func serveOnModel(t *testing.T, modelURL string) *httptest.Server {
	t.Helper()
	env := map[string]string{"TRELLIS_MODEL": "openai:gpt-test@" + modelURL + "/v1", "OPENAI_API_KEY": "test"}
	roles, err := provider.FromEnv(func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return serveDev(t, server.Config{Models: roles})
}
