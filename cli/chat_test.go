package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	example "github.com/trellis-go/trellis/examples/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server"
)

// chatTestState is the state of the small test graphs "ask" and "slow".
type chatTestState struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
}

// chatBundle is a real server on loopback and a config directory for the chat's files.
type chatBundle struct {
	url     string
	dir     string
	started chan string // the "slow" graph's node sends its input when it starts
	hs      *httptest.Server
}

// setupChat starts a server (dev mode unless cfg.Auth is set) with the assistants "example"
// (the ReAct example), "approve" (the same agent asking approval before world_clock), "ask" (a
// node that interrupts with a free question) and "slow" (a node that runs until cancelled).
func setupChat(t *testing.T, cfg server.Config) *chatBundle {
	t.Helper()
	b := &chatBundle{dir: t.TempDir(), started: make(chan string, 8)}
	cfg.Graphs = []server.GraphSpec{
		{ID: "example", Description: "The ReAct example.", Build: func(d server.Deps) (graph.Runnable, error) {
			return graph.Erase(example.New(offline.New(nil), graph.CompileOptions{Saver: d.Saver, Store: d.Store}))
		}},
		{ID: "approve", Description: "Asks before it tells the time.", Build: func(d server.Deps) (graph.Runnable, error) {
			tools, err := example.Tools(nil)
			if err != nil {
				return nil, err
			}
			return graph.Erase(react.New(offline.New(nil), &react.Options{
				Name: "approve", Tools: tools, Approve: []string{"world_clock"},
				Compile: graph.CompileOptions{Saver: d.Saver, Store: d.Store},
			}))
		}},
		{ID: "ask", Build: func(d server.Deps) (graph.Runnable, error) {
			g := graph.New[chatTestState]()
			g.AddNode("ask", func(ctx context.Context, s chatTestState) (chatTestState, error) {
				v, err := graph.Interrupt(ctx, map[string]any{"question": "What is your favourite colour?"})
				if err != nil {
					return chatTestState{}, err
				}
				return chatTestState{Messages: []message.Message{message.Assistant(fmt.Sprintf("You answered %v.", v))}}, nil
			})
			g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
			return graph.Erase(g.Compile(graph.CompileOptions{Name: "ask", Saver: d.Saver}))
		}},
		{ID: "slow", Build: func(d server.Deps) (graph.Runnable, error) {
			g := graph.New[chatTestState]()
			g.AddNode("wait", func(ctx context.Context, s chatTestState) (chatTestState, error) {
				b.started <- s.Messages[len(s.Messages)-1].Text()
				<-ctx.Done()
				return chatTestState{}, ctx.Err()
			})
			g.AddEdge(graph.START, "wait").AddEdge("wait", graph.END)
			return graph.Erase(g.Compile(graph.CompileOptions{Name: "slow", Saver: d.Saver}))
		}},
	}
	cfg.DataDir = t.TempDir()
	cfg.Dev = len(cfg.Auth.APIKeys) == 0 && len(cfg.Auth.JWTSecret) == 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Queue = server.NewLocalQueue(8)
	cfg.ShutdownGrace = 5 * time.Second
	s, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	b.hs = httptest.NewServer(s.Handler())
	b.url = b.hs.URL
	t.Cleanup(func() {
		b.hs.CloseClientConnections()
		b.hs.Close()
		s.Close()
	})
	return b
}

// writes records every Write, to tell a streamed answer from one printed at once.
type writes struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	chunks []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.chunks = append(w.chunks, string(p))
	return w.buf.Write(p)
}

func (w *writes) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// chat runs `trellis chat` against the bundle's server with stdin piped from the given text.
func (b *chatBundle) chat(t *testing.T, stdin string, args ...string) (*writes, error) {
	t.Helper()
	out := &writes{}
	var errb bytes.Buffer
	all := append([]string{"chat", "--url", b.url, "--config-dir", b.dir}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := Run(ctx, all, strings.NewReader(stdin), out, &errb)
	return out, err
}

// lastThread reads the thread the state file remembers for the assistant.
func (b *chatBundle) lastThread(t *testing.T, assistant string) string {
	t.Helper()
	st, err := loadChatState(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := st.last(b.url, assistant)
	return last.ThreadID
}

func TestChatStreamsTheAnswerAndShowsToolCalls(t *testing.T) {
	b := setupChat(t, server.Config{})
	out, err := b.chat(t, "What time is it in Tokyo?\n", "--assistant", "example")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	s := out.String()
	for _, want := range []string{
		"talking to example on " + b.url,
		"> What time is it in Tokyo?",
		"  -> world_clock {\"city\":\"Tokyo\"}",
		"  <- world_clock: It is ",
		"Here is what I found for \"What time is it in Tokyo?\".",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, s)
		}
	}
	// The tool call is shown before its result, and both before the final answer.
	if i, j, k := strings.Index(s, "-> world_clock"), strings.Index(s, "<- world_clock"), strings.Index(s, "Here is what I found"); !(i < j && j < k) {
		t.Errorf("tool call at %d, result at %d, answer at %d: out of order:\n%s", i, j, k, s)
	}
	// Token by token: the final answer arrived in many writes, not one.
	n := 0
	for _, c := range out.chunks {
		if c == "Here " || c == "found " || c == "Tokyo." {
			n++
		}
	}
	if n < 3 {
		t.Errorf("the answer was not streamed token by token; writes: %q", out.chunks)
	}
	if b.lastThread(t, "example") == "" {
		t.Error("the thread was not remembered in chat.json")
	}
}

func TestChatChoosesAnAssistantFromTheList(t *testing.T) {
	b := setupChat(t, server.Config{})
	out, err := b.chat(t, "ghost\n2\nhello\n")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	s := out.String()
	for _, want := range []string{"offers these assistants:", "1) approve: Asks before it tells the time.", "3) example: The ReAct example.", "no assistant \"ghost\"", "talking to ask on", "What is your favourite colour?"} {
		if !strings.Contains(s, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, s)
		}
	}
	// The end of the input while the question waits leaves the run paused, and says so.
	if !strings.Contains(s, "the run stays paused") {
		t.Errorf("an unanswered interrupt was not reported:\n%s", s)
	}
}

func TestChatResumesTheLastSession(t *testing.T) {
	b := setupChat(t, server.Config{})
	if out, err := b.chat(t, "What time is it in Tokyo?\n", "--assistant", "example"); err != nil {
		t.Fatalf("first session: %v\n%s", err, out)
	}
	first := b.lastThread(t, "example")

	out, err := b.chat(t, "y\n/history\n", "--assistant", "example")
	if err != nil {
		t.Fatalf("second session: %v\n%s", err, out)
	}
	s := out.String()
	if !strings.Contains(s, "resume your last conversation") || !strings.Contains(s, `last you said "What time is it in Tokyo?"`) {
		t.Errorf("no offer to resume:\n%s", s)
	}
	if !strings.Contains(s, "resumed thread "+first) || !strings.Contains(s, "you: What time is it in Tokyo?") || !strings.Contains(s, "  <- world_clock: It is") {
		t.Errorf("the resumed session does not show the first conversation:\n%s", s)
	}

	// Declining starts a new conversation; its first message makes a new thread.
	out, err = b.chat(t, "n\n/history\nWhat time is it in Paris?\n", "--assistant", "example")
	if err != nil {
		t.Fatalf("third session: %v\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, "starting a new conversation") || !strings.Contains(s, "(no messages yet") {
		t.Errorf("declining did not start over:\n%s", s)
	}
	if second := b.lastThread(t, "example"); second == "" || second == first {
		t.Errorf("after declining, the remembered thread is %q (first was %q)", second, first)
	}

	// --new does not ask.
	out, err = b.chat(t, "/history\n", "--assistant", "example", "--new")
	if err != nil || strings.Contains(out.String(), "resume your last") {
		t.Errorf("--new offered to resume: %v\n%s", err, out)
	}

	// A remembered thread deleted on the server is reported and forgotten.
	req, _ := http.NewRequest(http.MethodDelete, b.url+"/threads/"+b.lastThread(t, "example"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("deleting the thread: %v %v", err, resp)
	}
	resp.Body.Close()
	out, err = b.chat(t, "", "--assistant", "example")
	if err != nil || !strings.Contains(out.String(), "is gone from the server; starting a new one") {
		t.Errorf("a deleted thread: %v\n%s", err, out)
	}
	if got := b.lastThread(t, "example"); got != "" {
		t.Errorf("the deleted thread is still remembered: %q", got)
	}
}

func TestChatNewStartsAFreshThread(t *testing.T) {
	b := setupChat(t, server.Config{})
	out, err := b.chat(t, "What time is it in Tokyo?\n/new\nWhat time is it in Paris?\n/history\n", "--assistant", "example")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	s := out.String()
	if !strings.Contains(s, "new conversation: your next message starts a new thread.") {
		t.Fatalf("/new said nothing:\n%s", s)
	}
	hist := s[strings.LastIndex(s, "> /history"):]
	if !strings.Contains(hist, "you: What time is it in Paris?") || strings.Contains(hist, "Tokyo") {
		t.Errorf("after /new the history holds the old conversation:\n%s", hist)
	}
	var threads []map[string]any
	resp, err := http.Post(b.url+"/threads/search", "application/json", strings.NewReader(`{"limit": 100}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&threads); err != nil || len(threads) != 2 {
		t.Errorf("the server has %d threads, want 2 (err %v)", len(threads), err)
	}
}

func TestChatAnswersAnAgentInboxInterrupt(t *testing.T) {
	b := setupChat(t, server.Config{})
	cases := []struct {
		name, answers string
		want          []string
	}{
		{"accept", "maybe\naccept\n", []string{"answer one of: accept, edit, respond, ignore", "  <- world_clock: It is ", "in Tokyo."}},
		{"edit", "e\n{city: London}\n{\"city\": \"London\"}\n", []string{"the arguments must be a JSON object", "(current: {\"city\":\"Tokyo\"})", "  <- world_clock: It is ", "in London."}},
		{"respond", "r\nnot now, thanks\n", []string{"answered instead: not now, thanks"}},
		{"ignore", "ignore\n", []string{"  <- error from world_clock: Not run: the person reviewing this call ignored it"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := b.chat(t, "What time is it in Tokyo?\n"+c.answers+"/state\n", "--assistant", "approve", "--new")
			if err != nil {
				t.Fatalf("chat: %v\n%s", err, out)
			}
			s := out.String()
			if !strings.Contains(s, "== approval needed: world_clock ==") || !strings.Contains(s, "The agent wants to call **world_clock**") {
				t.Fatalf("the approval request was not shown:\n%s", s)
			}
			for _, w := range c.want {
				if !strings.Contains(s, w) {
					t.Errorf("the transcript lacks %q:\n%s", w, s)
				}
			}
			// The run went on to the end: nothing waits any more.
			state := s[strings.LastIndex(s, "> /state"):]
			if !strings.Contains(state, `"interrupts": []`) || !strings.Contains(state, `"next": []`) {
				t.Errorf("the thread still waits after the answer:\n%s", state)
			}
		})
	}
}

func TestChatAnswersAFreeInterrupt(t *testing.T) {
	b := setupChat(t, server.Config{})
	out, err := b.chat(t, "hello\nteal\n", "--assistant", "ask")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, `"question": "What is your favourite colour?"`) || !strings.Contains(s, "You answered teal.") {
		t.Errorf("free interrupt:\n%s", s)
	}
	// A JSON answer is sent as JSON; an answer left for later is given with /answer in a
	// resumed session.
	out, err = b.chat(t, "hello\n", "--assistant", "ask", "--new")
	if err != nil || !strings.Contains(out.String(), "the run stays paused") {
		t.Fatalf("leaving the question: %v\n%s", err, out)
	}
	out, err = b.chat(t, "y\n{\"r\": 1}\n", "--assistant", "ask")
	if err != nil {
		t.Fatalf("resuming: %v\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, "paused and waits for your answer") || !strings.Contains(s, "You answered map[r:1].") {
		t.Errorf("resuming a paused thread:\n%s", s)
	}
	out, _ = b.chat(t, "y\n/answer\n", "--assistant", "ask")
	if !strings.Contains(out.String(), "no run on this thread waits for an answer") {
		t.Errorf("/answer with nothing pending:\n%s", out)
	}
}

func TestChatCtrlCCancelsTheRunOnTheServer(t *testing.T) {
	b := setupChat(t, server.Config{})
	pr, pw := io.Pipe()
	defer pw.Close()
	sigs := make(chan os.Signal, 1)
	out := &writes{}
	in := newPlainReader(pr, out, sigs)
	defer in.close()
	done := make(chan error, 1)
	go func() {
		done <- chat(context.Background(), chatOptions{URL: b.url, Assistant: "slow", ConfigDir: b.dir, In: in, Out: out, Interrupts: sigs})
	}()
	if _, err := io.WriteString(pw, "take your time\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-b.started:
		if got != "take your time" {
			t.Fatalf("the run started with %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the run did not start:\n%s", out)
	}
	sigs <- os.Interrupt
	waitFor(t, out, "(answer cancelled)")
	thread := b.lastThread(t, "slow")
	var runs []struct {
		Status string `json:"status"`
	}
	resp, err := http.Get(b.url + "/threads/" + thread + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&runs)
	resp.Body.Close()
	if err != nil || len(runs) != 1 || runs[0].Status != "interrupted" {
		t.Fatalf("after Ctrl-C the runs are %+v (err %v), want one interrupted", runs, err)
	}
	// The thread is free again: the next message starts a run at once.
	if _, err := io.WriteString(pw, "again\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.started:
	case <-time.After(30 * time.Second):
		t.Fatalf("the second run did not start:\n%s", out)
	}
	sigs <- os.Interrupt
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(out.String(), "(answer cancelled)\n> ") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the second answer was not cancelled:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A second Ctrl-C right after the cancelled answer quits.
	sigs <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("a second Ctrl-C did not quit:\n%s", out)
	}
	if n := strings.Count(out.String(), "(answer cancelled)"); n != 2 {
		t.Errorf("%d answers cancelled, want 2:\n%s", n, out)
	}
}

// waitFor waits until the output holds want.
func waitFor(t *testing.T, out *writes, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the output never showed %q:\n%s", want, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestChatErrors(t *testing.T) {
	b := setupChat(t, server.Config{})

	// Nothing listens on a port just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	_, err = (&chatBundle{url: dead, dir: b.dir}).chat(t, "hello\n")
	if err == nil || !strings.Contains(err.Error(), "cannot reach a trellis server at "+dead) || !strings.Contains(err.Error(), "trellis serve --dev") {
		t.Errorf("unreachable server: %v", err)
	}

	_, err = b.chat(t, "hello\n", "--assistant", "ghost")
	if err == nil || !strings.Contains(err.Error(), `unknown assistant "ghost"`) || !strings.Contains(err.Error(), "approve, ask, example, slow") {
		t.Errorf("unknown assistant: %v", err)
	}
	if _, err := b.chat(t, "", "--url", "localhost:2024"); ExitCode(err) != 2 || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("a URL without scheme: %v", err)
	}
	if _, err := b.chat(t, "", "example"); ExitCode(err) != 2 {
		t.Errorf("a stray argument: %v", err)
	}

	// In the session, mistakes are reported and the session goes on.
	out, err := b.chat(t, "/frobnicate\n/assistant ghost\n/assistant\n/history\n/state\n/answer\n/help\n/assistant ask\n/quit\nnever sent\n", "--assistant", "example")
	if err != nil {
		t.Fatalf("session: %v\n%s", err, out)
	}
	s := out.String()
	for _, want := range []string{
		"unknown command /frobnicate; /help lists the commands.",
		`error: unknown assistant "ghost" on ` + b.url + " (known: approve, ask, example, slow)",
		"talking to example; the server offers: approve, ask, example, slow",
		"(no messages yet in this conversation)",
		"(no thread yet: send a message first)",
		"/new              start a new conversation",
		"now talking to ask.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "never sent") {
		t.Errorf("/quit did not quit:\n%s", s)
	}
}

func TestChatAuth(t *testing.T) {
	b := setupChat(t, server.Config{Auth: server.AuthConfig{APIKeys: map[string]server.Principal{
		"k-chat-test-0123456789": {User: "ana", Tenant: "acme", Permissions: []string{"*"}},
	}}})
	_, err := b.chat(t, "hello\n", "--assistant", "example")
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "--api-key") || !strings.Contains(err.Error(), "TRELLIS_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	_, err = b.chat(t, "hello\n", "--assistant", "example", "--api-key", "wrong-key-0123456789")
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong-key") {
		t.Errorf("a wrong key: %v (must not echo it)", err)
	}
	t.Setenv("TRELLIS_API_KEY", "k-chat-test-0123456789")
	out, err := b.chat(t, "What time is it in Tokyo?\n", "--assistant", "example")
	if err != nil || !strings.Contains(out.String(), "<- world_clock: It is") {
		t.Errorf("with TRELLIS_API_KEY: %v\n%s", err, out)
	}
}

func TestChatStateFile(t *testing.T) {
	dir := t.TempDir()
	st, err := loadChatState(dir)
	if err != nil || len(st.Servers) != 0 {
		t.Fatalf("a missing file: %+v %v", st, err)
	}
	st.remember("http://a", "example", "t1")
	st.remember("http://b", "example", "t2")
	if err := st.save(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, chatStateFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v, mode %v, want 0600", err, fi.Mode())
	}
	again, err := loadChatState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := again.last("http://a", "example"); l.ThreadID != "t1" {
		t.Errorf("reloaded: %+v", again)
	}
	if err := os.WriteFile(filepath.Join(dir, chatStateFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	damaged, err := loadChatState(dir)
	if err == nil || !strings.Contains(err.Error(), "will be rewritten") || damaged == nil || damaged.Servers == nil {
		t.Errorf("a damaged file: %v", err)
	}
	// The chat goes on with a damaged file, and says so.
	b := setupChat(t, server.Config{})
	if err := os.WriteFile(filepath.Join(b.dir, chatStateFile), []byte("]"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := b.chat(t, "/quit\n", "--assistant", "example")
	if err != nil || !strings.Contains(out.String(), "warning: ") {
		t.Errorf("damaged state in a session: %v\n%s", err, out)
	}
}

func TestReadSSE(t *testing.T) {
	in := ": comment\r\nid: 1\r\nevent: metadata\r\ndata: {\"run_id\":\"r\"}\r\n\r\n" +
		"event: custom\ndata: [1,\ndata: 2]\n\n" +
		"event: end\ndata: null"
	var got []sseEvent
	for ev, err := range readSSE(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != 3 {
		t.Fatalf("events: %+v", got)
	}
	if got[0].ID != "1" || got[0].Event != "metadata" || string(got[0].Data) != `{"run_id":"r"}` {
		t.Errorf("first: %+v", got[0])
	}
	if string(got[1].Data) != "[1,\n2]" {
		t.Errorf("multi-line data: %q", got[1].Data)
	}
	if got[2].Event != "end" || string(got[2].Data) != "null" {
		t.Errorf("last, without a blank line: %+v", got[2])
	}
}

func TestChatRendererShowsUnstreamedAnswersAndErrors(t *testing.T) {
	var out bytes.Buffer
	r := newChatRenderer(&out)
	r.handle(sseEvent{Event: "updates", Data: json.RawMessage(`{"model":{"messages":[{"id":"m1","type":"ai","content":[{"type":"text","text":"whole answer"}],"tool_calls":[{"id":"c1","name":"search","args":{"q":"x"}}]}]}}`)})
	r.handle(sseEvent{Event: "updates|sub:1", Data: json.RawMessage(`{"tools":{"messages":[{"id":"t1","role":"tool","name":"search","content":"found\nit","is_error":true}]}}`)})
	r.handle(sseEvent{Event: "error", Data: json.RawMessage(`{"error":"NodeError(model)","message":"the model is down"}`)})
	r.handle(sseEvent{Event: "values", Data: json.RawMessage(`{"__interrupt__":[{"id":"i1","value":1},{"id":"i1","value":1}]}`)})
	want := "whole answer\n  -> search {\"q\":\"x\"}\n  <- error from search: found it\nerror: the run failed: the model is down\n"
	if out.String() != want {
		t.Errorf("rendered:\n%q\nwant\n%q", out.String(), want)
	}
	if len(r.interrupts) != 1 {
		t.Errorf("interrupts: %+v", r.interrupts)
	}
}

func TestChatEndsWithItsContext(t *testing.T) {
	b := setupChat(t, server.Config{})
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	out := &writes{}
	go func() {
		done <- Run(ctx, []string{"chat", "--url", b.url, "--config-dir", b.dir, "--assistant", "example"}, pr, out, io.Discard)
	}()
	waitFor(t, out, "> ")
	cancel() // as SIGTERM does; stdin stays open
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the chat outlived its context")
	}
}

// --config sends configuration with every run: the example assistant, asked with
// approve_tools=true, asks before its tool, and the chat offers the Agent Inbox answers.
func TestChatSendsConfiguration(t *testing.T) {
	b := setupChat(t, server.Config{})
	out, err := b.chat(t, "What time is it in Tokyo?\naccept\n", "--assistant", "example", "--new", "--config", "approve_tools=true")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, "== approval needed: world_clock ==") || !strings.Contains(s, "  <- world_clock: It is ") {
		t.Fatalf("no approval asked with approve_tools=true:\n%s", s)
	}
	_, err = b.chat(t, "", "--config", "novalue")
	if err == nil || !strings.Contains(err.Error(), "not key=value") {
		t.Fatalf("a bad --config: %v", err)
	}
}
