package listforge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

// Two organisations, each with an API key.
var keys = map[string]server.Principal{
	"key-acme-ana-0000000":  {User: "ana", Tenant: "acme"},
	"key-acme-bob-0000000":  {User: "bob", Tenant: "acme"},
	"key-globex-gil-000000": {User: "gil", Tenant: "globex"},
}

type env struct {
	t   testing.TB
	url string
	s   *server.Server
}

func serve(t testing.TB, dir, dbURL string, o listforge.Options) *env {
	t.Helper()
	s := servertest.Start(t, server.Config{Apps: []server.App{listforge.New(o)}, DataDir: dir, DatabaseURL: dbURL,
		Auth: server.AuthConfig{APIKeys: keys}})
	return &env{t: t, url: s.URL, s: s.Server}
}

// doRoot calls the server's own API (not the app's) and decodes a 2xx answer into out.
func (e *env) doRoot(key, method, path string, out any) int {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.url+path, nil)
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			e.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

func (e *env) do(key, method, path string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.url+"/apps/listforge"+path, rd)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	if out != nil && resp.StatusCode >= 300 {
		_ = json.Unmarshal(data, out)
	}
	return resp.StatusCode
}

func (e *env) demoItem(key, demo string) store.Item {
	e.t.Helper()
	var page store.Page[store.Item]
	if code := e.do(key, "GET", "/api/v1/items?limit=100", nil, &page); code != 200 {
		e.t.Fatalf("list items: %d", code)
	}
	for _, it := range page.Items {
		if it.Attributes["demo"] == demo {
			return it
		}
	}
	e.t.Fatalf("no demo item %s among %d", demo, len(page.Items))
	return store.Item{}
}

func (e *env) dial(key, path string) *websocket.Conn {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/apps/listforge"+path+"?token="+key, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.CloseNow() })
	return c
}

func send(t testing.TB, c *websocket.Conn, event string, data any) {
	t.Helper()
	b, _ := json.Marshal(data)
	f, _ := json.Marshal(listforge.Frame{Event: event, Data: b})
	if err := c.Write(context.Background(), websocket.MessageText, f); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, c *websocket.Conn) listforge.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var f listforge.Frame
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// readTurn reads one chat turn's frames on c: the user's message (echoed once, first), the
// answer's tokens and the assistant's message. Any other frame fails the test.
func readTurn(t testing.TB, c *websocket.Conn) (user, answer store.Message, streamed string) {
	t.Helper()
	for {
		f := read(t, c)
		switch f.Event {
		case "token":
			var tok struct{ Token string }
			_ = json.Unmarshal(f.Data, &tok)
			streamed += tok.Token
		case "message":
			var m store.Message
			_ = json.Unmarshal(f.Data, &m)
			switch {
			case m.Role == "user" && user.ID == "":
				user = m
			case m.Role == "user":
				t.Fatalf("a second user message in one turn: %s", f.Data)
			case user.ID == "":
				t.Fatalf("the answer came before the user's message was echoed: %s", f.Data)
			default:
				return user, m, streamed
			}
		default:
			t.Fatalf("%s: %s", f.Event, f.Data)
		}
	}
}

// progress subscribes to a job and reads its events to job_complete.
func progress(t *testing.T, e *env, key, jobID string) (nodes []string, last listforge.JobComplete, frames []string) {
	t.Helper()
	c := e.dial(key, listforge.ResearchPath)
	send(t, c, "subscribe_job", map[string]string{"jobId": jobID})
	for {
		f := read(t, c)
		frames = append(frames, f.Event)
		switch f.Event {
		case "node_complete":
			var n listforge.NodeComplete
			_ = json.Unmarshal(f.Data, &n)
			if n.Status != "success" {
				t.Fatalf("node %+v", n)
			}
			nodes = append(nodes, n.Node)
		case "job_complete":
			_ = json.Unmarshal(f.Data, &last)
			return
		case "error":
			t.Fatalf("error frame: %s", f.Data)
		}
	}
}

// The graphs answer the registry's "hello" through /runs/wait.
func TestGraphsAnswerHello(t *testing.T) {
	t.Parallel()
	s, err := server.New(server.Config{Apps: []server.App{listforge.App()}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	for _, g := range []string{listforge.ResearchGraphID, listforge.ChatGraphID} {
		body := `{"assistant_id":"` + g + `","input":{"messages":[{"role":"user","content":"hello"}]}}`
		resp, err := http.Post(hs.URL+"/runs/wait", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(out), "__error__") {
			t.Fatalf("%s: %d %s", g, resp.StatusCode, out)
		}
	}
}

// A research job end to end: started through the API, its progress over the WebSocket in
// the graph's order, the job's record, and the research and evidence it persisted.
func TestResearchJobEndToEnd(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		researchEndToEnd(t, serve(t, t.TempDir(), "", listforge.Options{}))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		researchEndToEnd(t, serve(t, t.TempDir(), appdbtest.PostgresURL(t), listforge.Options{}))
	})
}

func researchEndToEnd(t *testing.T, e *env) {
	it := e.demoItem("key-acme-ana-0000000", catalog.DemoUPC)
	var started struct{ JobID string }
	if code := e.do("key-acme-ana-0000000", "POST", "/api/v1/items/"+it.ID+"/research", map[string]string{"priority": "high"}, &started); code != 202 {
		t.Fatalf("start: %d", code)
	}
	nodes, done, _ := progress(t, e, "key-acme-ana-0000000", started.JobID)
	want := []string{"load_context", "analyze_media", "identify_product", "search_comps", "analyze_comps", "calculate_price", "assess_missing", "persist_results"}
	if !slices.Equal(nodes, want) || done.Status != "success" || done.Research == nil || len(done.Research.Data.PriceBands) != 3 {
		t.Fatalf("nodes %v complete %+v", nodes, done)
	}
	// A late subscriber gets the same progress, replayed.
	again, done2, _ := progress(t, e, "key-acme-ana-0000000", started.JobID)
	if !slices.Equal(again, want) || done2.Status != "success" {
		t.Fatalf("replay %v %+v", again, done2)
	}
	var job store.ResearchRun
	if code := e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID+"/research/jobs/"+started.JobID, nil, &job); code != 200 {
		t.Fatalf("job: %d", code)
	}
	if job.Status != "success" || job.StepCount != 8 || len(job.StepHistory) != 8 || job.StartedAt == nil || job.CompletedAt == nil || job.Priority != "high" ||
		job.Checkpoint["after_node"] != "persist_results" || job.Checkpoint["thread_id"] != listforge.ThreadOf(job.ID) {
		t.Fatalf("job %+v", job)
	}
	// The job's priority is its run's: the server's queue starts it before normal and low runs
	// waiting for a slot (the queues' own ordering: server.TestPriority*).
	var run server.Run
	if code := e.doRoot("key-acme-ana-0000000", "GET", "/threads/"+job.ThreadID+"/runs/"+job.RunID, &run); code != 200 || run.Priority != server.PriorityHigh {
		t.Fatalf("the job's run: %d priority %q, want high", code, run.Priority)
	}
	var latest store.Research
	if code := e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID+"/research/latest", nil, &latest); code != 200 || latest.ResearchRunID != started.JobID {
		t.Fatalf("latest: %d %+v", code, latest)
	}
	var ev store.Bundle
	if code := e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID+"/evidence", nil, &ev); code != 200 || len(ev.Records) == 0 {
		t.Fatalf("evidence: %d %d", code, len(ev.Records))
	}
	var hist store.Page[store.Research]
	if code := e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID+"/research/history?page=1&limit=5", nil, &hist); code != 200 || hist.Total != 1 {
		t.Fatalf("history: %d %+v", code, hist)
	}
	// Another organisation sees none of it.
	if code := e.do("key-globex-gil-000000", "GET", "/api/v1/items/"+it.ID+"/research/jobs/"+started.JobID, nil, nil); code != 404 {
		t.Fatalf("other org reads the job: %d", code)
	}
	if code := e.do("key-globex-gil-000000", "GET", "/api/v1/items/"+it.ID+"/research/latest", nil, nil); code != 404 {
		t.Fatalf("other org reads the research: %d", code)
	}
	if code := e.do("key-globex-gil-000000", "POST", "/api/v1/items/"+it.ID+"/research", nil, nil); code != 404 {
		t.Fatalf("other org researches the item: %d", code)
	}
	if code := e.do("", "GET", "/api/v1/items", nil, nil); code != 401 {
		t.Fatalf("no credentials: %d", code)
	}
}

func TestNotReadyItemFailsTheJob(t *testing.T) {
	t.Parallel()
	e := serve(t, t.TempDir(), "", listforge.Options{})
	it := e.demoItem("key-acme-ana-0000000", catalog.DemoNotReady)
	var started struct{ JobID string }
	e.do("key-acme-ana-0000000", "POST", "/api/v1/items/"+it.ID+"/research", nil, &started)
	nodes, done, _ := progress(t, e, "key-acme-ana-0000000", started.JobID)
	if !slices.Equal(nodes, []string{"load_context"}) || done.Status != "error" || !strings.HasPrefix(done.Error, research.MsgNotReady) {
		t.Fatalf("nodes %v complete %+v", nodes, done)
	}
}

func TestBadInputNamesTheField(t *testing.T) {
	t.Parallel()
	e := serve(t, t.TempDir(), "", listforge.Options{})
	it := e.demoItem("key-acme-ana-0000000", catalog.DemoUPC)
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"POST", "/api/v1/items", map[string]any{"title": "x", "defaultPrice": "cheap"}, "defaultPrice"},
		{"POST", "/api/v1/items", map[string]any{"title": "x", "colour": "red"}, "colour"},
		{"POST", "/api/v1/items", map[string]any{"title": "x", "lifecycleStatus": "gone"}, "lifecycleStatus"},
		{"PATCH", "/api/v1/items/" + it.ID, map[string]any{"defaultPrice": -3}, "defaultPrice"},
		{"PATCH", "/api/v1/items/" + it.ID, map[string]any{"weight": 3}, "weight"},
		{"POST", "/api/v1/items/" + it.ID + "/research", map[string]any{"priority": "urgent"}, "priority"},
		{"GET", "/api/v1/items?page=0", nil, "page"},
	} {
		var out struct{ Detail, Hint string }
		if code := e.do("key-acme-ana-0000000", c.method, c.path, c.body, &out); code != 400 || !strings.Contains(out.Detail, "field "+c.field+":") || out.Hint == "" {
			t.Errorf("%s %s %v: %d %+v", c.method, c.path, c.body, code, out)
		}
	}
	var patched store.Item
	if code := e.do("key-acme-ana-0000000", "PATCH", "/api/v1/items/"+it.ID, map[string]any{"defaultPrice": 199, "reason": "matches comps"}, &patched); code != 200 || *patched.DefaultPrice != 199 {
		t.Fatalf("patch: %d %+v", code, patched)
	}
	var trail []store.Audit
	if e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID+"/audit", nil, &trail); len(trail) != 1 || trail[0].Reason != "matches comps" {
		t.Fatalf("audit %+v", trail)
	}
}

// The chat: a question answered from the research with streamed tokens, an update proposed and
// applied once, research started from the chat.
func TestChatOverWebSocket(t *testing.T) {
	t.Parallel()
	e := serve(t, t.TempDir(), "", listforge.Options{})
	it := e.demoItem("key-acme-ana-0000000", catalog.DemoLabels)
	var started struct{ JobID string }
	e.do("key-acme-ana-0000000", "POST", "/api/v1/items/"+it.ID+"/research", nil, &started)
	progress(t, e, "key-acme-ana-0000000", started.JobID)
	var sess struct{ SessionID string }
	if code := e.do("key-acme-ana-0000000", "POST", "/api/v1/items/"+it.ID+"/chat/sessions", nil, &sess); code != 201 {
		t.Fatalf("session: %d", code)
	}
	c := e.dial("key-acme-ana-0000000", listforge.ChatWSPath)
	// Another user of the organisation cannot join it.
	other := e.dial("key-acme-bob-0000000", listforge.ChatWSPath)
	send(t, other, "join_session", map[string]string{"sessionId": sess.SessionID})
	if f := read(t, other); f.Event != "error" {
		t.Fatalf("another user joined: %s %s", f.Event, f.Data)
	}
	send(t, c, "join_session", map[string]string{"sessionId": sess.SessionID})
	if f := read(t, c); f.Event != "joined" {
		t.Fatalf("join: %s %s", f.Event, f.Data)
	}
	turn := func(text string) (string, store.Message) {
		send(t, c, "send_message", map[string]string{"sessionId": sess.SessionID, "content": text})
		_, answer, streamed := readTurn(t, c)
		return streamed, answer
	}
	streamed, m := turn("What price should I list this for?")
	if !strings.Contains(m.Content, "$") || streamed != m.Content {
		t.Fatalf("answer %q streamed %q", m.Content, streamed)
	}
	_, m = turn("Set the price to $289")
	if len(m.Actions) != 1 || m.Actions[0].Type != "update_field" || m.Actions[0].Applied || !strings.Contains(m.Content, "$289") {
		t.Fatalf("proposal %+v", m)
	}
	var item store.Item
	e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID, nil, &item)
	if *item.DefaultPrice == 289 {
		t.Fatal("the update was applied before the user applied it")
	}
	send(t, c, "apply_action", map[string]any{"messageId": m.ID, "actionIndex": 0})
	f := read(t, c)
	var res listforge.ActionResult
	_ = json.Unmarshal(f.Data, &res)
	if f.Event != "action_applied" || !res.Success || res.Field != "defaultPrice" || *res.Item.DefaultPrice != 289 {
		t.Fatalf("apply: %s %s", f.Event, f.Data)
	}
	send(t, c, "apply_action", map[string]any{"messageId": m.ID, "actionIndex": 0})
	f = read(t, c)
	_ = json.Unmarshal(f.Data, &res)
	if res.Success || !strings.Contains(res.Error, "already") {
		t.Fatalf("second apply: %s", f.Data)
	}
	// The item changed after the research: the answer suggests a refresh.
	_, m = turn("what did similar ones sell for?")
	if !strings.Contains(m.Content, "refresh") || len(m.Actions) == 0 || m.Actions[0].Type != "start_research" {
		t.Fatalf("stale: %+v", m)
	}
	_, m = turn("please refresh the research")
	if !strings.Contains(m.Content, "started fresh research") {
		t.Fatalf("research from chat: %+v", m)
	}
	var msgs store.Page[store.Message]
	if code := e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID+"/chat/sessions/"+sess.SessionID+"/messages?limit=100", nil, &msgs); code != 200 || msgs.Total != 8 || !msgs.Items[3].Actions[0].Applied {
		t.Fatalf("messages: %d %+v", code, msgs)
	}
	if code := e.do("key-acme-bob-0000000", "GET", "/api/v1/items/"+it.ID+"/chat/sessions/"+sess.SessionID+"/messages", nil, nil); code != 404 {
		t.Fatalf("another user reads the session: %d", code)
	}
}

// eBay times out: the search is retried three times with backoff, then the job pauses ("Research
// paused, will resume automatically") and resumes from its checkpoint by itself; the nodes that
// had finished do not run again.
func TestTimeoutPausesAndResumesTheJob(t *testing.T) {
	t.Parallel()
	market := catalog.NewServer(catalog.Generate(time.Now()))
	e := serve(t, t.TempDir(), "", listforge.Options{Offline: market, ResumeDelay: 20 * time.Millisecond})
	it := e.demoItem("key-acme-ana-0000000", catalog.DemoLabels)
	market.FailNext(503, 503, 503, 503, 503, 503, 503, 503) // sold and active searches, four tries each
	var started struct{ JobID string }
	e.do("key-acme-ana-0000000", "POST", "/api/v1/items/"+it.ID+"/research", nil, &started)
	c := e.dial("key-acme-ana-0000000", listforge.ResearchPath)
	send(t, c, "subscribe_job", map[string]string{"jobId": started.JobID})
	var events []string
	paused := false
	for {
		f := read(t, c)
		switch f.Event {
		case "job_status":
			var j store.ResearchRun
			_ = json.Unmarshal(f.Data, &j)
			paused = paused || j.Message == research.MsgPaused
		case "node_complete":
			var n listforge.NodeComplete
			_ = json.Unmarshal(f.Data, &n)
			events = append(events, n.Node+":"+n.Status)
		}
		if f.Event == "job_complete" {
			var done listforge.JobComplete
			_ = json.Unmarshal(f.Data, &done)
			if done.Status != "success" {
				t.Fatalf("job %+v after %v", done, events)
			}
			break
		}
	}
	if !paused || !slices.Contains(events, "search_comps:error") || !slices.Contains(events, "search_comps:success") {
		t.Fatalf("paused %v events %v", paused, events)
	}
	var job store.ResearchRun
	e.do("key-acme-ana-0000000", "GET", "/api/v1/items/"+it.ID+"/research/jobs/"+started.JobID, nil, &job)
	loads := 0
	for _, s := range job.StepHistory {
		if s.Node == "load_context" {
			loads++
		}
	}
	if job.Attempts != 2 || loads != 1 || job.Status != "success" {
		t.Fatalf("attempts %d load_context ran %d times: %+v", job.Attempts, loads, job.StepHistory)
	}
}

// Two replicas on one Postgres: a job started on one is followed, live and in order, by a
// subscriber of the other.
func TestProgressReachesAnotherReplica(t *testing.T) {
	t.Parallel()
	url := appdbtest.PostgresURL(t)
	a := serve(t, t.TempDir(), url, listforge.Options{})
	b := serve(t, t.TempDir(), url, listforge.Options{})
	it := a.demoItem("key-acme-ana-0000000", catalog.DemoUPC)
	var started struct{ JobID string }
	if code := a.do("key-acme-ana-0000000", "POST", "/api/v1/items/"+it.ID+"/research", nil, &started); code != 202 {
		t.Fatalf("start: %d", code)
	}
	nodes, done, _ := progress(t, b, "key-acme-ana-0000000", started.JobID)
	want := []string{"load_context", "analyze_media", "identify_product", "search_comps", "analyze_comps", "calculate_price", "assess_missing", "persist_results"}
	if !slices.Equal(nodes, want) || done.Status != "success" {
		t.Fatalf("on the other replica: %v %+v", nodes, done)
	}
}
