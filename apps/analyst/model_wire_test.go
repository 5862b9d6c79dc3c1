package analyst_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/openai"
)

// chatServer is a local model server speaking the OpenAI Chat Completions API (streamed, as the
// client asks), answering each request from what it asks for: a structured output by its
// schema's name, a tool-calling turn by its tools.
type chatServer struct {
	mu      sync.Mutex
	prompts map[string]string // schema name → the request's last user message
	answer  func(schema, user string) string
}

type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

func (m wireMessage) text() string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				s, _ := pm["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

func (cs *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Messages []wireMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		ResponseFormat *struct {
			JSONSchema struct {
				Name string `json:"name"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var sys, user string
	tools := 0
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			sys = m.text()
		case "user":
			user = m.text()
		case "tool":
			tools++
		}
	}
	var text, call, args string
	has := map[string]bool{}
	for _, t := range req.Tools {
		has[t.Function.Name] = true
	}
	switch {
	case req.ResponseFormat != nil:
		name := req.ResponseFormat.JSONSchema.Name
		cs.mu.Lock()
		cs.prompts[name] = user
		cs.mu.Unlock()
		text = cs.answer(name, user)
	case has["Done"]: // a supervisor's tool loop: nothing to ask
		if tools == 0 {
			call, args = "Done", `{"done":true}`
		} else {
			text = "done"
		}
	case has["rag_tool"]: // a task agent: the knowledge base, then the web, then its answer
		q := strings.TrimPrefix(strings.SplitN(user, "\n", 2)[0], "Sub-question: ")
		raw, _ := json.Marshal(map[string]string{"query": q})
		switch tools {
		case 0:
			call, args = "rag_tool", string(raw)
		case 1:
			call, args = "web_search_tool", string(raw)
		default:
			text = "I have what I need."
		}
	case strings.Contains(sys, "greeting a consultant"):
		text = "Hello from the model."
	default:
		text = cs.answer("", user)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		raw, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", raw)
	}
	chunk(map[string]any{"role": "assistant", "content": text}, nil)
	finish := "stop"
	if call != "" {
		finish = "tool_calls"
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": call, "arguments": args}}}}, nil)
	}
	chunk(map[string]any{}, finish)
	raw, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": "test-model",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", raw)
}

var refRe = regexp.MustCompile(`"ref":\s*"(https?://[^"]+)"`)

// With a real model (a local server speaking the Chat Completions API), nothing of the corpus
// runs as rules: the model plans from the retrieved documents, reads the findings against the
// firm's assumptions (their statements from the corpus) and names the contradictions the
// discovery gate asks about, and plans the report's sections.
func TestRealModelOverTheWire(t *testing.T) {
	t.Parallel()
	cs := &chatServer{prompts: map[string]string{}}
	var webRef string
	cs.answer = func(schema, user string) string {
		switch schema {
		case "research_plan":
			return `{"topic":"Corporate e-bike leasing","sub_questions":[{"question":"Who sells e-bike leasing to companies?","sources":["company_db","web"]}],"output_format":"markdown","frameworks":["SWOT"],"rationale":"From the documents."}`
		case "finding":
			return `{"answer":"Leasing to companies is starting.","confidence":0.7,"key_quotes":["A leasing pilot started."]}`
		case "verdict":
			return `{"approved":true,"critique":""}`
		case "discoveries":
			if m := refRe.FindStringSubmatch(user); m != nil {
				webRef = m[1]
			}
			return `{"summary":"The model's summary.","follow_up_questions":["Shall we size it?"],"contradictions":[{"assumption":"A4","source":"` + webRef + `","evidence":"Buyers split on pricing."},{"assumption":"A9","source":"` + webRef + `","evidence":"An assumption that does not exist."},{"assumption":"A2","source":"https://nowhere.example/","evidence":"A source the findings do not have."}]}`
		case "report_outline":
			return `{"sections":[{"name":"Who leases to companies","findings":["q1"]}]}`
		case "fact_operations":
			return `{"operations":[]}`
		case "final_route":
			return `{"route":"approve","format":"markdown"}`
		}
		return "The model's section, citing [1]."
	}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	m, err := openai.New("test-model", &openai.Options{APIKey: "sk-test", BaseURL: srv.URL + "/v1", Timeout: 10 * time.Second, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, g := harness(t, analyst.Options{}, model.NewRoles(m, "openai"))
	r := &run{t: t, g: g, thread: "wire", user: "wes"}
	r.ask(voltraQuestion, map[string]string{"name": "Wes Park"})
	if r.action != "Review research plan" || r.state.ResearchPlan.Topic != "Corporate e-bike leasing" || len(r.state.ResearchPlan.SubQuestions) != 1 {
		t.Fatalf("the plan is not the model's: %q %+v", r.action, r.state.ResearchPlan)
	}
	if p := cs.prompts["research_plan"]; !strings.Contains(p, "Retrieved context:") || !strings.Contains(p, "Competitor profile") {
		t.Errorf("the model did not plan from the retrieved documents: %q", p)
	}
	r.resume("accept", nil)
	if r.action != "Review discoveries" {
		t.Fatalf("at %q", r.action)
	}
	if p := cs.prompts["discoveries"]; !strings.Contains(p, "A4: corporate customers prefer a monthly subscription") {
		t.Errorf("the model was not given the firm's assumptions from the corpus: %q", p)
	}
	// Only the model's contradiction: the one naming an unknown assumption or a source the
	// findings do not have is dropped, and the corpus's cue words (which find A1 in these
	// sources offline) do not run.
	if webRef == "" || len(r.state.Contradictions) != 1 || r.state.Contradictions[0].Assumption != "A4" || r.state.Contradictions[0].Source.Ref != webRef ||
		r.state.Contradictions[0].Evidence != "Buyers split on pricing." {
		t.Fatalf("contradictions %+v (web source %q)", r.state.Contradictions, webRef)
	}
	found := false
	for _, d := range r.state.Discoveries {
		found = found || (d.Kind == "contradiction" && d.Assumption == "A4")
	}
	if !found {
		t.Errorf("the discovery gate does not show the contradiction: %+v", r.state.Discoveries)
	}
	r.resume("accept", nil)
	if r.action != "Review final report" || !strings.Contains(r.state.ReportDraft, "## Who leases to companies") || strings.Contains(r.state.ReportDraft, "## Other findings") {
		t.Fatalf("the report's sections are not the model's: %q\n%s", r.action, r.state.ReportDraft)
	}
}
