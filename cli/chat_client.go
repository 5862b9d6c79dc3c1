package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/trellis-go/trellis/server/client"
)

// chatClient speaks the parts of the Agent Protocol that `trellis chat` needs. Its methods may
// be called from several goroutines at once.
type chatClient struct {
	base string // server URL without a trailing slash
	key  string // API key or JWT, sent as a bearer token when set
	hc   *http.Client
}

// chatAssistant is an assistant as POST /assistants/search lists it.
type chatAssistant struct {
	AssistantID string `json:"assistant_id"`
	GraphID     string `json:"graph_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// label is how the chat names an assistant to the user.
func (a chatAssistant) label() string {
	if a.GraphID != "" {
		return a.GraphID
	}
	if a.Name != "" {
		return a.Name
	}
	return a.AssistantID
}

// chatMessage is a conversation message as the server sends it (LangChain's shape; trellis's is read too).
type chatMessage struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Type       string          `json:"type"` // LangChain's name for the role, accepted as well
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	IsError    bool            `json:"is_error"`
	Status     string          `json:"status"` // LangChain's tool message status: "error" for a failed call
	// ResponseMetadata (LangChain's) and Metadata (trellis's) may carry a tool's structured
	// result under "structured".
	ResponseMetadata map[string]json.RawMessage `json:"response_metadata"`
	Metadata         map[string]json.RawMessage `json:"metadata"`
}

// structured is the tool's structured result the message carries, if any.
func (m chatMessage) structured() json.RawMessage {
	if r := m.ResponseMetadata["structured"]; len(r) > 0 {
		return r
	}
	return m.Metadata["structured"]
}

// failed reports whether a tool message says its call failed, in either shape.
func (m chatMessage) failed() bool { return m.IsError || m.Status == "error" }

type chatToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Args      json.RawMessage `json:"args"` // LangChain's name for the arguments
}

func (c chatToolCall) arguments() string {
	a := c.Arguments
	if len(a) == 0 {
		a = c.Args
	}
	if len(a) == 0 {
		return "{}"
	}
	return string(a)
}

// role returns the message's role, mapping LangChain's type names onto trellis's roles.
func (m chatMessage) role() string {
	if m.Role != "" {
		return m.Role
	}
	switch m.Type {
	case "ai", "AIMessageChunk":
		return "assistant"
	case "human":
		return "user"
	}
	return m.Type
}

// text returns the message's content: a string, or the text parts of a content list.
func (m chatMessage) text() string {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(m.Content)
}

// chatInterrupt is one pending interrupt of a paused run.
type chatInterrupt struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
}

// chatThreadState is the part of GET /threads/{id}/state the chat reads.
type chatThreadState struct {
	Values     json.RawMessage `json:"values"`
	Next       []string        `json:"next"`
	Interrupts []chatInterrupt `json:"interrupts"`
	Tasks      []struct {
		Interrupts []chatInterrupt `json:"interrupts"`
	} `json:"tasks"`
}

// messages returns the thread's conversation, or nil when its values hold none.
func (s chatThreadState) messages() []chatMessage {
	var v struct {
		Messages []chatMessage `json:"messages"`
	}
	_ = json.Unmarshal(s.Values, &v)
	return v.Messages
}

// pending returns the interrupts the thread waits on, from the state's interrupts or its tasks.
func (s chatThreadState) pending() []chatInterrupt {
	out := append([]chatInterrupt(nil), s.Interrupts...)
	if len(out) == 0 {
		for _, t := range s.Tasks {
			out = append(out, t.Interrupts...)
		}
	}
	return out
}

// sseEvent is one server-sent event.
type sseEvent = client.StreamPart

// readSSE parses a text/event-stream body.
var readSSE = client.ReadEvents

// ServerUnreachableError says that no server answered at URL, and how to start one.
type ServerUnreachableError struct {
	URL string
	Err error
}

func (e *ServerUnreachableError) Error() string {
	return fmt.Sprintf("cannot reach a trellis server at %s (%v); start one with `trellis serve --dev` (it listens on http://127.0.0.1:2024), or point --url or TRELLIS_URL at a running one", e.URL, e.Err)
}

func (e *ServerUnreachableError) Unwrap() error { return e.Err }

// APIStatusError is a refusal from the server: its status and what the body said.
type APIStatusError struct {
	URL     string
	Method  string
	Path    string
	Status  int
	Message string
	Hint    string
}

func (e *APIStatusError) Error() string {
	switch e.Status {
	case http.StatusUnauthorized:
		return fmt.Sprintf("%s refused the request (401 Unauthorized: %s); pass a key with --api-key or set TRELLIS_API_KEY (an API key from the server's TRELLIS_API_KEYS, or a JWT)", e.URL, e.Message)
	case http.StatusForbidden:
		return fmt.Sprintf("%s refused %s %s (403 Forbidden: %s); the key in --api-key or TRELLIS_API_KEY lacks the permission", e.URL, e.Method, e.Path, e.Message)
	}
	s := fmt.Sprintf("%s answered %s %s with %d %s: %s", e.URL, e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Message)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func newChatClient(base, key string) (*chatClient, error) {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &UsageError{Msg: fmt.Sprintf("--url %q is not an http(s) URL such as http://127.0.0.1:2024", base)}
	}
	return &chatClient{base: base, key: key, hc: &http.Client{}}, nil
}

// request sends one request and returns the response when its status is 2xx.
func (c *chatClient) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Whatever failed below HTTP (refused, no route, DNS, TLS) means no server answered.
		return nil, &ServerUnreachableError{URL: c.base, Err: unwrapURLError(err)}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8192))
	e := &APIStatusError{URL: c.base, Method: method, Path: path, Status: resp.StatusCode}
	var body2 struct {
		Detail  string `json:"detail"`
		Message string `json:"message"`
		Error   string `json:"error"`
		Hint    string `json:"hint"`
	}
	if json.Unmarshal(raw, &body2) == nil {
		e.Message = firstNonEmpty(body2.Detail, body2.Message, body2.Error)
		e.Hint = body2.Hint
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(raw))
	}
	return nil, e
}

// unwrapURLError drops the "Post \"URL\":" wrapper of net/http, since the chat names the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// call sends a request and decodes a JSON answer into out (when out is not nil).
func (c *chatClient) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s%s: the answer is not the JSON expected: %w", method, c.base, path, err)
	}
	return nil
}

func (c *chatClient) assistants(ctx context.Context) ([]chatAssistant, error) {
	var out []chatAssistant
	err := c.call(ctx, http.MethodPost, "/assistants/search", map[string]any{"limit": 1000}, &out)
	return out, err
}

func (c *chatClient) createThread(ctx context.Context, metadata map[string]any) (string, error) {
	var out struct {
		ThreadID string `json:"thread_id"`
	}
	if err := c.call(ctx, http.MethodPost, "/threads", map[string]any{"metadata": metadata}, &out); err != nil {
		return "", err
	}
	if out.ThreadID == "" {
		return "", fmt.Errorf("%s created a thread without a thread_id", c.base)
	}
	return out.ThreadID, nil
}

// threadExists reports whether the thread is there (false on 404).
func (c *chatClient) threadExists(ctx context.Context, id string) (bool, error) {
	err := c.call(ctx, http.MethodGet, "/threads/"+url.PathEscape(id), nil, nil)
	var se *APIStatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return false, nil
	}
	return err == nil, err
}

func (c *chatClient) state(ctx context.Context, id string) (chatThreadState, json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.call(ctx, http.MethodGet, "/threads/"+url.PathEscape(id)+"/state", nil, &raw); err != nil {
		return chatThreadState{}, nil, err
	}
	var st chatThreadState
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, raw, fmt.Errorf("the state of thread %s is not the JSON expected: %w", id, err)
	}
	return st, raw, nil
}

func (c *chatClient) cancelRun(ctx context.Context, threadID, runID string) error {
	return c.call(ctx, http.MethodPost, "/threads/"+url.PathEscape(threadID)+"/runs/"+url.PathEscape(runID)+"/cancel?action=interrupt&wait=1", nil, nil)
}

// activeRuns lists the thread's runs that are pending or running.
func (c *chatClient) activeRuns(ctx context.Context, threadID string) ([]string, error) {
	var runs []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if err := c.call(ctx, http.MethodGet, "/threads/"+url.PathEscape(threadID)+"/runs", nil, &runs); err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range runs {
		if r.Status == "pending" || r.Status == "running" {
			ids = append(ids, r.RunID)
		}
	}
	return ids, nil
}

// stream starts a run on the thread and yields its server-sent events until the stream ends.
func (c *chatClient) stream(ctx context.Context, threadID string, body map[string]any) iter.Seq2[sseEvent, error] {
	return func(yield func(sseEvent, error) bool) {
		resp, err := c.request(ctx, http.MethodPost, "/threads/"+url.PathEscape(threadID)+"/runs/stream", body)
		if err != nil {
			yield(sseEvent{}, err)
			return
		}
		defer resp.Body.Close()
		for ev, err := range readSSE(resp.Body) {
			if err != nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}
