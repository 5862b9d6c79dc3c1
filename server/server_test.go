package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/checkpoint"
)

func TestAssistants(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var list []Assistant
	b.mustDo("POST", "/assistants/search", map[string]any{"limit": 10}, &list, 200)
	if len(list) != 3 || list[0].GraphID != "example" || list[1].GraphID != "flow" {
		t.Fatalf("assistants: %+v", list)
	}
	var a Assistant
	b.mustDo("GET", "/assistants/"+AssistantID("flow"), nil, &a, 200)
	if a.GraphID != "flow" || a.Description == nil || *a.Description != "plan, approve, act" {
		t.Fatalf("get by assistant_id: %+v", a)
	}
	b.mustDo("GET", "/assistants/flow", nil, &a, 200) // by graph ID too
	if code := b.do("GET", "/assistants/nope", nil, nil); code != 404 {
		t.Fatalf("unknown assistant: %d", code)
	}
	var g struct {
		Nodes []struct{ ID, Type string } `json:"nodes"`
		Edges []struct {
			Source, Target string
			Conditional    bool
		} `json:"edges"`
	}
	b.mustDo("GET", "/assistants/flow/graph", nil, &g, 200)
	var ids []string
	for _, n := range g.Nodes {
		ids = append(ids, n.ID)
	}
	if !slices.Equal(ids, []string{"__start__", "plan", "approve", "act", "__end__"}) || len(g.Edges) != 4 {
		t.Fatalf("graph: %+v", g)
	}
	if code := b.do("GET", "/assistants/flow/graph?xray=maybe", nil, nil); code != 400 {
		t.Fatalf("bad xray: %d", code)
	}
	var sch map[string]any
	b.mustDo("GET", "/assistants/flow/schemas", nil, &sch, 200)
	props := sch["state_schema"].(map[string]any)["properties"].(map[string]any)
	if _, ok := props["steps"]; !ok {
		t.Fatalf("state schema: %v", sch["state_schema"])
	}
	var n int
	b.mustDo("POST", "/assistants/count", map[string]any{"graph_id": "slow"}, &n, 200)
	if n != 1 {
		t.Fatalf("count: %d", n)
	}
}

func TestThreadsCRUD(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var th Thread
	b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"user": "ann", "n": 1}}, &th, 200)
	if th.Status != ThreadIdle || th.Metadata["user"] != "ann" {
		t.Fatalf("created: %+v", th)
	}
	id := th.ThreadID
	// if_exists
	if code := b.do("POST", "/threads", map[string]any{"thread_id": id}, nil); code != 409 {
		t.Fatalf("duplicate thread: %d", code)
	}
	b.mustDo("POST", "/threads", map[string]any{"thread_id": id, "if_exists": "do_nothing"}, &th, 200)
	if th.Metadata["user"] != "ann" {
		t.Fatalf("do_nothing returned %+v", th)
	}
	b.mustDo("PATCH", "/threads/"+id, map[string]any{"metadata": map[string]any{"topic": "x"}}, &th, 200)
	if th.Metadata["topic"] != "x" || th.Metadata["user"] != "ann" {
		t.Fatalf("patched: %+v", th.Metadata)
	}
	other := b.newThread(map[string]any{"user": "bob"})
	var found []Thread
	b.mustDo("POST", "/threads/search", map[string]any{"metadata": map[string]any{"user": "bob"}}, &found, 200)
	if len(found) != 1 || found[0].ThreadID != other {
		t.Fatalf("search: %+v", found)
	}
	var n int
	b.mustDo("POST", "/threads/count", map[string]any{}, &n, 200)
	if n != 2 {
		t.Fatalf("count: %d", n)
	}
	b.mustDo("DELETE", "/threads/"+id, nil, nil, 204)
	if code := b.do("GET", "/threads/"+id, nil, nil); code != 404 {
		t.Fatalf("deleted thread: %d", code)
	}
	if code := b.do("GET", "/threads/00000000-0000-0000-0000-000000000000/state", nil, nil); code != 404 {
		t.Fatalf("unknown thread state: %d", code)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{MaxBodyBytes: 1024}})
	tid := b.newThread(nil)
	cases := []struct {
		name, method, path, body string
		status                   int
		mention                  string
	}{
		{"malformed json", "POST", "/threads", `{"metadata": `, 400, "not valid JSON"},
		{"wrong type names the field", "POST", "/threads", `{"metadata": "x"}`, 400, `"metadata"`},
		{"limit as a string", "POST", "/threads/search", `{"limit": "ten"}`, 400, `"limit"`},
		{"unknown stream mode", "POST", "/threads/" + tid + "/runs/stream", `{"assistant_id": "flow", "stream_mode": ["values", "telepathy"]}`, 400, "telepathy"},
		{"no assistant", "POST", "/threads/" + tid + "/runs", `{"input": {}}`, 400, "assistant_id"},
		{"unknown assistant", "POST", "/threads/" + tid + "/runs", `{"assistant_id": "ghost"}`, 404, "ghost"},
		{"unknown thread", "POST", "/threads/6b1f3c0e-0000-4000-8000-000000000000/runs", `{"assistant_id": "flow"}`, 404, "thread"},
		{"unknown interrupt node", "POST", "/threads/" + tid + "/runs", `{"assistant_id": "flow", "interrupt_before": ["nope"]}`, 400, "nope"},
		{"bad multitask", "POST", "/threads/" + tid + "/runs", `{"assistant_id": "flow", "multitask_strategy": "shout"}`, 400, "multitask_strategy"},
		{"input not an object", "POST", "/threads/" + tid + "/runs", `{"assistant_id": "flow", "input": [1]}`, 400, "input"},
		{"oversized body", "POST", "/threads", `{"metadata": {"x": "` + strings.Repeat("a", 2000) + `"}}`, 413, "larger than 1024"},
		{"unknown route", "GET", "/nowhere", ``, 404, "no route"},
		{"thread id not a uuid", "POST", "/threads", `{"thread_id": "abc"}`, 400, "UUID"},
		{"bad webhook", "POST", "/threads/" + tid + "/runs", `{"assistant_id": "flow", "webhook": "ftp://x"}`, 400, "webhook"},
		{"store put without namespace", "PUT", "/store/items", `{"key": "k", "value": {}}`, 400, "namespace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body map[string]any
			code := b.do(c.method, c.path, c.body, &body)
			if code != c.status {
				t.Fatalf("status %d, want %d (%v)", code, c.status, body)
			}
			detail, _ := body["detail"].(string)
			if !strings.Contains(detail+" "+strings.Join(hintOf(body), ""), c.mention) {
				t.Fatalf("detail %q does not mention %q", detail, c.mention)
			}
		})
	}
}

func hintOf(m map[string]any) []string {
	if h, ok := m["hint"].(string); ok {
		return []string{h}
	}
	return nil
}

func TestStreamInterruptResume(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	body := map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "lunch"}, "stream_mode": []string{"values", "updates", "custom"}}
	resp, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", body, nil, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/") {
		t.Fatalf("Content-Location: %q", resp.Header.Get("Content-Location"))
	}
	got := names(evs)
	if got[0] != "metadata" || got[len(got)-1] != "end" || !slices.Contains(got, "custom") || !slices.Contains(got, "updates") {
		t.Fatalf("events: %v", got)
	}
	for i, e := range evs {
		if e.ID != strconv.Itoa(i+1) {
			t.Fatalf("event %d has id %q", i, e.ID)
		}
	}
	var lastValues map[string]any
	var sawInterruptUpdate bool
	for _, e := range evs {
		if e.Event == "values" {
			json.Unmarshal(e.Data, &lastValues)
		}
		if e.Event == "updates" && strings.Contains(string(e.Data), "__interrupt__") {
			sawInterruptUpdate = true
		}
	}
	ints, _ := lastValues["__interrupt__"].([]any)
	if len(ints) != 1 || !sawInterruptUpdate {
		t.Fatalf("last values %v; interrupt update %v", lastValues, sawInterruptUpdate)
	}
	var th Thread
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Status != ThreadInterrupted {
		t.Fatalf("thread status %q", th.Status)
	}
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	if !slices.Equal(st.Next, []string{"approve"}) || len(st.Interrupts) != 1 || len(st.Tasks) != 1 {
		t.Fatalf("state: next %v interrupts %v tasks %v", st.Next, st.Interrupts, st.Tasks)
	}
	// Resume with a command and wait.
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "yes"}}, &out, 200)
	if out["approved"] != "yes" || len(out["steps"].([]any)) != 3 {
		t.Fatalf("resumed output: %v", out)
	}
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Status != ThreadIdle {
		t.Fatalf("thread status after resume %q", th.Status)
	}
	var hist []ThreadState
	b.mustDo("POST", "/threads/"+tid+"/history", map[string]any{"limit": 3}, &hist, 200)
	if len(hist) != 3 || len(hist[0].Next) != 0 {
		t.Fatalf("history: %d entries, newest next %v", len(hist), hist[0].Next)
	}
	var runs []Run
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &runs, 200)
	if len(runs) != 2 || runs[0].Status != RunSuccess || runs[1].Status != RunSuccess {
		t.Fatalf("runs: %+v", runs)
	}
}

func TestRunErrorEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	_, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "explode"}, "interrupt_after": []string{"plan"}}, nil, nil)
	if got := names(evs); !slices.Equal(got, []string{"metadata", "values", "values", "values", "end"}) {
		t.Fatalf("events before interrupt_after: %v", got)
	}
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "ok"}}, &out, 200)
	// The run paused at the node's interrupt; resume again to reach the failing node.
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "ok"}}, &out, 200)
	e, _ := out["__error__"].(map[string]any)
	if e == nil || !strings.Contains(e["message"].(string), "refuses to explode") {
		t.Fatalf("error output: %v", out)
	}
	var th Thread
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Status != ThreadError {
		t.Fatalf("thread status %q", th.Status)
	}
}

func TestMessagesModes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	body := map[string]any{"assistant_id": "example", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Convert 42 km to miles"}}},
		"stream_mode": []string{"messages-tuple", "messages"}}
	_, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", body, nil, nil)
	var tuples, partial, meta int
	for _, e := range evs {
		switch e.Event {
		case "messages":
			var pair []json.RawMessage
			if err := json.Unmarshal(e.Data, &pair); err != nil || len(pair) != 2 {
				t.Fatalf("messages event is not a pair: %s", e.Data)
			}
			if !strings.Contains(string(pair[1]), `"langgraph_node"`) {
				t.Fatalf("tuple metadata: %s", pair[1])
			}
			if strings.Contains(string(pair[0]), `"type":"tool"`) {
				continue // the tools node's whole message: no partial for it
			}
			tuples++
		case "messages/partial":
			partial++
		case "messages/metadata":
			meta++
		}
	}
	if tuples == 0 || partial != tuples || meta == 0 {
		t.Fatalf("tuples %d partial %d metadata %d: %v", tuples, partial, meta, names(evs))
	}
}

func TestStatelessRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var out map[string]any
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}, "interrupt_before": []string{"approve"}}, &out, 200)
	if steps, _ := out["steps"].([]any); len(steps) != 1 {
		t.Fatalf("stateless wait: %v", out)
	}
	resp, evs := b.stream("POST", "/runs/stream", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}}, nil, nil)
	if len(evs) == 0 || !strings.HasPrefix(resp.Header.Get("Content-Location"), "/runs/") {
		t.Fatalf("stateless stream: %v %q", names(evs), resp.Header.Get("Content-Location"))
	}
	var n int
	b.mustDo("POST", "/threads/count", map[string]any{}, &n, 200)
	if n != 0 {
		t.Fatalf("stateless runs left %d threads behind", n)
	}
}

func TestBackgroundJoinAndResumeStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "bg"}, "stream_mode": []string{"values", "updates", "debug"}}, &run, 200)
	<-b.gates.started
	// Read the first events, then drop the connection.
	_, first := b.stream("GET", "/threads/"+tid+"/runs/"+run.RunID+"/stream", nil, nil, func(e sseEvent) bool { return e.ID == "3" })
	if len(first) != 3 {
		t.Fatalf("first part: %v", names(first))
	}
	b.gates.release <- struct{}{}
	var out map[string]any
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, &out, 200)
	if steps := out["steps"].([]any); len(steps) != 2 || steps[1] != "wait:bg" {
		t.Fatalf("join: %v", out)
	}
	// Reconnect with Last-Event-ID: the rest, no gap and no duplicate.
	_, rest := b.stream("GET", "/threads/"+tid+"/runs/"+run.RunID+"/stream", nil, http.Header{"Last-Event-ID": {"3"}}, nil)
	if len(rest) == 0 || rest[0].ID != "4" {
		t.Fatalf("rest starts at %v", rest)
	}
	for i, e := range rest {
		if e.ID != strconv.Itoa(4+i) {
			t.Fatalf("gap or duplicate at %d: id %s", i, e.ID)
		}
	}
	if rest[len(rest)-1].Event != "end" {
		t.Fatalf("rest ends with %q", rest[len(rest)-1].Event)
	}
	// A stream_mode filter on join.
	_, onlyUpdates := b.stream("GET", "/threads/"+tid+"/runs/"+run.RunID+"/stream?stream_mode=updates", nil, nil, nil)
	for _, e := range onlyUpdates {
		if e.Event != "updates" && !isControlEvent(e.Event) {
			t.Fatalf("filtered join got %q", e.Event)
		}
	}
	b.waitStatus(tid, run.RunID, RunSuccess)
}

func TestMultitask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	start := func(topic, strategy string, want int) Run {
		var run Run
		b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": topic}, "multitask_strategy": strategy}, &run, want)
		return run
	}
	r1 := start("one", "", 200)
	if got := <-b.gates.started; got != "one" {
		t.Fatalf("started %q", got)
	}
	var e map[string]any
	if code := b.do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "x"}}, &e); code != 409 {
		t.Fatalf("reject: %d %v", code, e)
	}
	r2 := start("two", "enqueue", 200)
	b.gates.release <- struct{}{}
	if got := <-b.gates.started; got != "two" {
		t.Fatalf("second started %q", got)
	}
	// interrupt: the running run is cancelled and the new one runs.
	r3 := start("three", "interrupt", 200)
	b.waitStatus(tid, r2.RunID, RunInterrupted)
	if got := <-b.gates.started; got != "three" {
		t.Fatalf("third started %q", got)
	}
	b.gates.release <- struct{}{}
	b.waitStatus(tid, r3.RunID, RunSuccess)
	b.waitStatus(tid, r1.RunID, RunSuccess)
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	steps := st.Values.(map[string]any)["steps"].([]any)
	if steps[len(steps)-1] != "wait:three" {
		t.Fatalf("steps %v", steps)
	}
}

func TestCancelRollback(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	go func() { <-b.gates.started; b.gates.release <- struct{}{} }()
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "keep"}}, nil, 200)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "drop"}}, &run, 200)
	<-b.gates.started
	b.mustDo("POST", "/threads/"+tid+"/runs/"+run.RunID+"/cancel?action=rollback&wait=1", nil, nil, 202)
	if code := b.do("GET", "/threads/"+tid+"/runs/"+run.RunID, nil, nil); code != 404 {
		t.Fatalf("rolled-back run still there: %d", code)
	}
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	steps := st.Values.(map[string]any)["steps"].([]any)
	if len(steps) != 2 || steps[1] != "wait:keep" {
		t.Fatalf("state after rollback: %v", steps)
	}
}

func TestCancelInterrupt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "c"}}, &run, 200)
	<-b.gates.started
	if code := b.do("POST", "/threads/"+tid+"/runs/"+run.RunID+"/cancel?action=explode", nil, nil); code != 400 {
		t.Fatalf("bad action: %d", code)
	}
	b.mustDo("POST", "/threads/"+tid+"/runs/"+run.RunID+"/cancel?wait=1", nil, nil, 202)
	b.waitStatus(tid, run.RunID, RunInterrupted)
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	if steps := st.Values.(map[string]any)["steps"].([]any); len(steps) != 1 {
		t.Fatalf("interrupted run kept %v (the first node's checkpoint should stay)", steps)
	}
}

func TestUpdateStateAsNode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(map[string]any{"graph_id": "flow"})
	var res map[string]any
	b.mustDo("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"topic": "manual", "steps": []string{"plan"}}, "as_node": "plan"}, &res, 200)
	if res["checkpoint"] == nil {
		t.Fatalf("update-state: %v", res)
	}
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	if !slices.Equal(st.Next, []string{"approve"}) {
		t.Fatalf("next after update as plan: %v", st.Next)
	}
	if code := b.do("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{}, "as_node": "ghost"}, nil); code != 400 {
		t.Fatalf("unknown as_node: %d", code)
	}
	var cp Thread
	b.mustDo("POST", "/threads/"+tid+"/copy", nil, &cp, 200)
	var st2 ThreadState
	b.mustDo("GET", "/threads/"+cp.ThreadID+"/state", nil, &st2, 200)
	if st2.Values.(map[string]any)["topic"] != "manual" {
		t.Fatalf("copy state: %v", st2.Values)
	}
}

// A copied thread has the source's whole history, checkpoint for checkpoint, and goes its own
// way from there.
func TestThreadCopyKeepsHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(map[string]any{"graph_id": "flow"})
	b.mustDo("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"topic": "first", "steps": []string{"plan"}}, "as_node": "plan"}, nil, 200)
	b.mustDo("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"topic": "second"}, "as_node": "plan"}, nil, 200)
	history := func(id string) []ThreadState {
		var h []ThreadState
		b.mustDo("POST", "/threads/"+id+"/history", map[string]any{"limit": 100}, &h, 200)
		return h
	}
	checkpointID := func(st ThreadState) any { return st.Checkpoint.(map[string]any)["checkpoint_id"] }
	src := history(tid)
	if len(src) < 2 {
		t.Fatalf("the source has %d checkpoints", len(src))
	}
	var cp Thread
	b.mustDo("POST", "/threads/"+tid+"/copy", nil, &cp, 200)
	if cp.ThreadID == tid || cp.Metadata["graph_id"] != "flow" {
		t.Fatalf("copy: %+v", cp)
	}
	got := history(cp.ThreadID)
	if len(got) != len(src) {
		t.Fatalf("the copy has %d checkpoints, the source %d", len(got), len(src))
	}
	for i := range src {
		if checkpointID(got[i]) != checkpointID(src[i]) || !reflect.DeepEqual(got[i].Values, src[i].Values) || !slices.Equal(got[i].Next, src[i].Next) {
			t.Fatalf("checkpoint %d of the copy: %v %v %v, of the source: %v %v %v", i,
				checkpointID(got[i]), got[i].Values, got[i].Next, checkpointID(src[i]), src[i].Values, src[i].Next)
		}
	}
	var th Thread
	b.mustDo("GET", "/threads/"+cp.ThreadID, nil, &th, 200)
	var vals map[string]any
	if json.Unmarshal(th.Values, &vals); vals["topic"] != "second" {
		t.Fatalf("the copy's thread record has values %v", th.Values)
	}
	// Changing the copy leaves the source as it was.
	b.mustDo("POST", "/threads/"+cp.ThreadID+"/state", map[string]any{"values": map[string]any{"topic": "third"}, "as_node": "plan"}, nil, 200)
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	if st.Values.(map[string]any)["topic"] != "second" || len(history(tid)) != len(src) {
		t.Fatalf("the source changed with its copy: %v", st.Values)
	}
	if code := b.do("POST", "/threads/"+uuid.NewString()+"/copy", nil, nil); code != 404 {
		t.Fatalf("copying an unknown thread: %d", code)
	}
}

// A run's durability decides which checkpoints it writes: sync (the default) one per
// superstep, exit only the one where the run stops; checkpoint_during false is exit.
func TestRunDurability(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkpoints := func(body map[string]any) int {
		t.Helper()
		tid := b.newThread(nil)
		body["assistant_id"] = "flow"
		body["input"] = map[string]any{"topic": "d"}
		var out map[string]any
		b.mustDo("POST", "/threads/"+tid+"/runs/wait", body, &out, 200)
		if out["__interrupt__"] == nil {
			t.Fatalf("%v: the run did not stop at approve: %v", body, out)
		}
		var h []ThreadState
		b.mustDo("POST", "/threads/"+tid+"/history", map[string]any{"limit": 100}, &h, 200)
		var st ThreadState
		b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
		if !slices.Equal(st.Next, []string{"approve"}) {
			t.Fatalf("%v: next %v", body, st.Next)
		}
		return len(h)
	}
	sync, async, exit := checkpoints(map[string]any{}), checkpoints(map[string]any{"durability": "async"}), checkpoints(map[string]any{"durability": "exit"})
	during := checkpoints(map[string]any{"checkpoint_during": false})
	if sync < 2 || async != sync || exit != 1 || during != 1 {
		t.Fatalf("checkpoints written: sync %d, async %d, exit %d, checkpoint_during false %d", sync, async, exit, during)
	}
	if code := b.do("POST", "/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{}, "durability": "eventually"}, nil); code != 400 {
		t.Fatalf("an unknown durability: %d", code)
	}
}

// A run created with after_seconds stays pending, holding its thread, until it is due.
func TestRunAfterSeconds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	start := time.Now()
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "later"}, "after_seconds": 1}, &run, 200)
	var got Run
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID, nil, &got, 200)
	if got.Status != RunPending {
		t.Fatalf("a run due in a second has status %q", got.Status)
	}
	if code := b.do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{}}, nil); code != 409 {
		t.Fatalf("another run on the thread of a scheduled one: %d, want 409", code)
	}
	var out map[string]any
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, &out, 200)
	if elapsed := time.Since(start); elapsed < time.Second || out["topic"] != "later" {
		t.Fatalf("the run ended after %v with %v; it was due after a second", elapsed, out)
	}
	for _, bad := range []any{-1, "soon", 1e12} {
		if code := b.do("POST", "/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{}, "after_seconds": bad}, nil); code != 400 {
			t.Errorf("after_seconds %v: %d, want 400", bad, code)
		}
	}
}

// A thread created with supersteps starts with their updates applied, each as its node; one
// that cannot be applied gets 400 and leaves no thread behind.
func TestThreadCreateWithSupersteps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var th Thread
	b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "flow"}, "supersteps": []any{
		map[string]any{"updates": []any{map[string]any{"values": map[string]any{"topic": "seeded", "steps": []string{"plan"}}, "as_node": "plan"}}},
		map[string]any{"updates": []any{map[string]any{"values": map[string]any{"approved": "yes"}, "as_node": "approve"}}},
	}}, &th, 200)
	var st ThreadState
	b.mustDo("GET", "/threads/"+th.ThreadID+"/state", nil, &st, 200)
	vals := st.Values.(map[string]any)
	if vals["topic"] != "seeded" || vals["approved"] != "yes" || !slices.Equal(st.Next, []string{"act"}) {
		t.Fatalf("seeded state %v, next %v", vals, st.Next)
	}
	var rec map[string]any
	if json.Unmarshal(th.Values, &rec); rec["topic"] != "seeded" {
		t.Fatalf("the thread record's values: %s", th.Values)
	}
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"supersteps": []any{map[string]any{"updates": []any{map[string]any{"values": map[string]any{"topic": "x"}, "as_node": "plan"}}}}}, "graph_id"},
		{map[string]any{"metadata": map[string]any{"graph_id": "flow"}, "supersteps": []any{map[string]any{"updates": []any{map[string]any{"values": map[string]any{"topic": "x"}, "as_node": "ghost"}}}}}, "supersteps[0].updates[0]"},
		{map[string]any{"metadata": map[string]any{"graph_id": "flow"}, "supersteps": []any{map[string]any{"updates": []any{map[string]any{"as_node": "plan"}}}}}, "supersteps[0].updates[0].values"},
	} {
		id := uuid.NewString()
		c.body["thread_id"] = id
		var e map[string]any
		if code := b.do("POST", "/threads", c.body, &e); code != 400 || !strings.Contains(fmt.Sprint(e), c.want) {
			t.Errorf("%v: %d %v, want 400 naming %s", c.body, code, e, c.want)
		}
		if code := b.do("GET", "/threads/"+id, nil, nil); code != 404 {
			t.Errorf("a thread whose supersteps failed was kept: %d", code)
		}
	}
}

func TestStoreRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"notes", "ann"}, "key": "k1", "value": map[string]any{"text": "buy milk"}}, nil, 204)
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"notes", "bob"}, "key": "k2", "value": map[string]any{"text": "call home"}}, nil, 204)
	var it itemJSON
	b.mustDo("GET", "/store/items?namespace=notes.ann&key=k1", nil, &it, 200)
	if it.Value["text"] != "buy milk" || !slices.Equal(it.Namespace, []string{"notes", "ann"}) {
		t.Fatalf("item: %+v", it)
	}
	var res struct{ Items []itemJSON }
	b.mustDo("POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"notes"}, "query": "milk"}, &res, 200)
	// Ranked by words and meaning: the milk note first (the other may follow, lower).
	if len(res.Items) == 0 || res.Items[0].Key != "k1" || (len(res.Items) > 1 && *res.Items[1].Score >= *res.Items[0].Score) {
		t.Fatalf("search: %+v", res.Items)
	}
	var ns struct{ Namespaces [][]string }
	b.mustDo("POST", "/store/namespaces", map[string]any{"max_depth": 1}, &ns, 200)
	if len(ns.Namespaces) != 1 || !slices.Equal(ns.Namespaces[0], []string{"notes"}) {
		t.Fatalf("namespaces: %v", ns.Namespaces)
	}
	b.mustDo("DELETE", "/store/items", map[string]any{"namespace": []string{"notes", "ann"}, "key": "k1"}, nil, 204)
	// A missing item is null, as the SDK's getItem types it.
	var gone json.RawMessage
	if code := b.do("GET", "/store/items?namespace=notes.ann&key=k1", nil, &gone); code != 200 || string(gone) != "null" {
		t.Fatalf("deleted item: %d %s, want 200 null", code, gone)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mustDo("GET", "/healthz", nil, nil, 200)
	b.mustDo("GET", "/readyz", nil, nil, 200)
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "m"}}, nil, 200)
	resp, err := http.Get(b.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 1<<16)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(sb.String(), "trellis_runs_created_total 1") || !strings.Contains(sb.String(), `trellis_runs_finished_total{status="success"} 1`) {
		t.Fatalf("metrics lack run counters:\n%s", sb.String()[:min(2000, sb.Len())])
	}
}

// A thread with a ttl is deleted, checkpoints and all, once it has gone that long without an
// update; one without, or updated since, stays.
func TestThreadTTL(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{ThreadTTLSweep: 50 * time.Millisecond}})
	var short, long, none Thread
	b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "flow"}, "ttl": 0.01}, &short, 200)
	b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "flow"}}, &long, 200)
	b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "flow"}}, &none, 200)
	b.mustDo("PATCH", "/threads/"+long.ThreadID, map[string]any{"ttl": map[string]any{"ttl": 60, "strategy": "delete"}}, nil, 200)
	var waiting Thread // expired, but a run waits on it
	b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "flow"}, "ttl": 0.01}, &waiting, 200)
	b.mustDo("POST", "/threads/"+waiting.ThreadID+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{}, "after_seconds": 600}, nil, 200)
	b.mustDo("POST", "/threads/"+short.ThreadID+"/state", map[string]any{"values": map[string]any{"topic": "t"}, "as_node": "plan"}, nil, 200)
	deadline := time.Now().Add(10 * time.Second)
	for b.do("GET", "/threads/"+short.ThreadID, nil, nil) != 404 {
		if time.Now().After(deadline) {
			t.Fatal("a thread with a ttl of 0.6 s was not deleted within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	flow, err := b.srv.assistant("flow")
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := flow.graph.State(context.Background(), checkpoint.Ref{ThreadID: short.ThreadID}); err == nil && snap.Ref.CheckpointID != "" {
		t.Fatalf("the expired thread's checkpoints are still there: %s", snap.Ref.CheckpointID)
	}
	time.Sleep(700 * time.Millisecond) // the waiting thread's ttl has passed too, and sweeps ran
	for _, id := range []string{long.ThreadID, none.ThreadID, waiting.ThreadID} {
		if code := b.do("GET", "/threads/"+id, nil, nil); code != 200 {
			t.Fatalf("thread %s, without an expired ttl or with a run waiting: %d", id, code)
		}
	}
	for _, bad := range []any{0, -5, "soon", map[string]any{"ttl": 5, "strategy": "archive"}, map[string]any{"strategy": "delete"}} {
		if code := b.do("POST", "/threads", map[string]any{"ttl": bad}, nil); code != 400 {
			t.Errorf("ttl %v: %d, want 400", bad, code)
		}
		if code := b.do("PATCH", "/threads/"+none.ThreadID, map[string]any{"ttl": bad}, nil); code != 400 {
			t.Errorf("patch with ttl %v: %d, want 400", bad, code)
		}
	}
}

// A run with no input on a thread that waits at a breakpoint continues it (LangGraph's input
// None), instead of starting the graph again from its input.
func TestNullInputContinuesAPausedThread(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}, "interrupt_before": []string{"approve"}}, &out, 200)
	if steps, _ := out["steps"].([]any); len(steps) != 1 {
		t.Fatalf("paused at the breakpoint: %v", out)
	}
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "input": nil}, &out, 200)
	// approve ran and asks its question; plan did not run again.
	if steps, _ := out["steps"].([]any); len(steps) != 1 || out["__interrupt__"] == nil {
		t.Fatalf("after a run with no input: %v, want plan once and approve's interrupt", out)
	}
}
