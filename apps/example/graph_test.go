package example_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/server"
)

// The assistant "interview" pauses at an interrupt raised inside its node "ask", served
// through the API as LangGraph serves one (the run's __interrupt__, the thread's state tasks),
// and goes on when the next run resumes it with Command({resume}).
func TestInterviewInterruptsInsideANode(t *testing.T) {
	s, err := server.New(server.Config{Apps: []server.App{example.App()}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	tid := post(t, hs.URL+"/threads", map[string]any{})["thread_id"].(string)
	runs := hs.URL + "/threads/" + tid + "/runs/wait"
	out := post(t, runs, map[string]any{"assistant_id": "interview", "input": map[string]any{}})
	ins, _ := out["__interrupt__"].([]any)
	if len(ins) != 1 {
		t.Fatalf("no interrupt: %v", out)
	}
	in := ins[0].(map[string]any)
	if q, _ := in["value"].(map[string]any); q["question"] != "What is your name?" || in["id"] == "" {
		t.Fatalf("interrupt %v", in)
	}
	state := get(t, hs.URL+"/threads/"+tid+"/state")
	tasks, _ := state["tasks"].([]any)
	if next, _ := state["next"].([]any); len(next) != 1 || next[0] != "ask" || len(tasks) != 1 {
		t.Fatalf("state next %v tasks %v", state["next"], tasks)
	}
	if tis, _ := tasks[0].(map[string]any)["interrupts"].([]any); len(tis) != 1 {
		t.Fatalf("the waiting task's interrupts: %v", tasks[0])
	}

	out = post(t, runs, map[string]any{"assistant_id": "interview", "command": map[string]any{"resume": "Ada"}})
	msgs, _ := out["messages"].([]any)
	if out["name"] != "Ada" || len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "Nice to meet you, Ada." {
		t.Fatalf("after the resume: %v", out)
	}
	if _, paused := out["__interrupt__"]; paused {
		t.Fatalf("still paused: %v", out)
	}
}

func get(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return out
}
