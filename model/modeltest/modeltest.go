// Package modeltest runs local HTTP servers that speak the OpenAI Chat Completions and Anthropic
// Messages wire formats, streaming included, so provider code can be tested with no network and
// no key.
//
// A server replays the replies it is given, one per request, and records every request:
//
//	srv := modeltest.NewOpenAI(t,
//		modeltest.Reply{Status: 429, RetryAfter: "0"},
//		modeltest.Reply{ToolCalls: calls, SplitArgs: 3}, // arguments sent 3 bytes per chunk
//	)
//	m, _ := openai.New("gpt-4o", &openai.Options{BaseURL: srv.URL + "/v1", APIKey: "test"})
//
// Replies can also fail the way real providers do: an HTTP error with a provider error body and
// Retry-After, a stream cut off in the middle of a token, or an event holding malformed JSON.
package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Reply is what the server answers to one request.
type Reply struct {
	// Text is the assistant's text; streamed TextChunk bytes at a time (0 means 4).
	Text      string
	TextChunk int
	// ToolCalls are the calls to make. With SplitArgs > 0 a streamed call's arguments are sent
	// SplitArgs bytes per chunk and (OpenAI only) its name is split over two chunks.
	ToolCalls []message.ToolCall
	SplitArgs int
	// Usage is reported at the end; zero means a count derived from the request and reply sizes.
	Usage model.Usage
	// FinishReason overrides the wire finish reason ("stop"/"end_turn", "tool_calls"/"tool_use",
	// "length"/"max_tokens").
	FinishReason string

	// Status, when not 0 or 200, answers with that HTTP status and a provider error body.
	Status int
	// RetryAfter is sent as the Retry-After header of an error reply.
	RetryAfter string
	// ErrorType and ErrorCode fill the error body (OpenAI: type and code; Anthropic: error.type).
	// ErrorMessage is its message.
	ErrorType, ErrorCode, ErrorMessage string

	// CutAfter > 0 cuts a stream after that many text chunks, in the middle of the next event,
	// and drops the connection.
	CutAfter int
	// Malformed makes the stream send an event whose JSON is broken, after the text.
	Malformed bool
	// Delay waits this long before each streamed chunk.
	Delay time.Duration
	// Gate, when not nil, is received from before each streamed text chunk, so a test or
	// benchmark can pace the stream.
	Gate <-chan struct{}
}

// Request is one request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any // the JSON body, decoded
	Raw          []byte
	At           time.Time
}

// Server is a local wire-format server. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	format string

	mu       sync.Mutex
	replies  []Reply
	requests []Request
	// Repeat makes the last reply answer every further request instead of a 500 error.
	Repeat bool
}

// NewOpenAI starts a server for POST /v1/chat/completions (and /chat/completions) that answers
// with replies in order. It is closed when the test ends.
func NewOpenAI(t testing.TB, replies ...Reply) *Server { return start(t, "openai", replies) }

// NewAnthropic starts a server for POST /v1/messages that answers with replies in order. It is
// closed when the test ends.
func NewAnthropic(t testing.TB, replies ...Reply) *Server { return start(t, "anthropic", replies) }

func start(t testing.TB, format string, replies []Reply) *Server {
	s := &Server{format: format, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) next(r *http.Request, raw []byte, body map[string]any) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw, At: time.Now()})
	if len(s.replies) == 0 {
		return Reply{}, false
	}
	rep := s.replies[0]
	if len(s.replies) > 1 || !s.Repeat {
		s.replies = s.replies[1:]
	}
	return rep, true
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.writeError(w, Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "modeltest: body is not JSON: " + err.Error()})
		return
	}
	wantPath := map[string][]string{"openai": {"/v1/chat/completions", "/chat/completions"}, "anthropic": {"/v1/messages"}}[s.format]
	if r.Method != http.MethodPost || (r.URL.Path != wantPath[0] && (len(wantPath) < 2 || r.URL.Path != wantPath[1])) {
		s.writeError(w, Reply{Status: 404, ErrorType: "not_found_error", ErrorMessage: fmt.Sprintf("modeltest: %s %s is not served; use POST %s", r.Method, r.URL.Path, wantPath[0])})
		return
	}
	rep, ok := s.next(r, raw, body)
	if !ok {
		s.writeError(w, Reply{Status: 500, ErrorType: "server_error", ErrorMessage: "modeltest: no reply scripted for this request"})
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		s.writeError(w, rep)
		return
	}
	if rep.Usage == (model.Usage{}) {
		rep.Usage = model.Usage{InputTokens: len(raw)/4 + 1, OutputTokens: len(rep.Text)/4 + 1}
	}
	stream, _ := body["stream"].(bool)
	modelName, _ := body["model"].(string)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		if s.format == "openai" {
			_, _ = w.Write(openAIWhole(rep, modelName))
		} else {
			_, _ = w.Write(anthropicWhole(rep, modelName))
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sw := &sse{w: w, f: w.(http.Flusher), rep: rep}
	if s.format == "openai" {
		include := false
		if so, ok := body["stream_options"].(map[string]any); ok {
			include, _ = so["include_usage"].(bool)
		}
		openAIStream(sw, rep, modelName, include)
	} else {
		anthropicStream(sw, rep, modelName)
	}
}

func (s *Server) writeError(w http.ResponseWriter, rep Reply) {
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-should-retry", map[bool]string{true: "true", false: "false"}[rep.Status == 429 || rep.Status >= 500])
	w.WriteHeader(rep.Status)
	msg := rep.ErrorMessage
	if msg == "" {
		msg = http.StatusText(rep.Status)
	}
	var body any
	if s.format == "openai" {
		typ := rep.ErrorType
		if typ == "" {
			typ = map[bool]string{true: "server_error", false: "invalid_request_error"}[rep.Status >= 500]
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nilIfEmpty(rep.ErrorCode)}}
	} else {
		typ := rep.ErrorType
		if typ == "" {
			typ = map[int]string{400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}[rep.Status]
			if typ == "" {
				typ = "api_error"
			}
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	}
	_ = json.NewEncoder(w).Encode(body)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// sse writes server-sent events, honouring a reply's pacing and its cut.
type sse struct {
	w     http.ResponseWriter
	f     http.Flusher
	rep   Reply
	texts int
	dead  bool
}

func (s *sse) event(name string, v any) {
	if s.dead {
		return
	}
	if s.rep.Delay > 0 {
		time.Sleep(s.rep.Delay)
	}
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.f.Flush()
}

func (s *sse) raw(line string) {
	if s.dead {
		return
	}
	fmt.Fprint(s.w, line)
	s.f.Flush()
}

// text reports whether the next text chunk may be sent; it cuts the stream when the reply says so.
func (s *sse) text() bool {
	if s.dead {
		return false
	}
	if s.rep.Gate != nil {
		<-s.rep.Gate
	}
	if s.rep.CutAfter > 0 && s.texts == s.rep.CutAfter {
		s.cut()
		return false
	}
	s.texts++
	return true
}

// cut writes half an event and drops the connection without ending the response.
func (s *sse) cut() {
	fmt.Fprint(s.w, `data: {"choices":[{"index":0,"delta":{"content":"tru`)
	s.f.Flush()
	if hj, ok := s.w.(http.Hijacker); ok {
		if conn, buf, err := hj.Hijack(); err == nil {
			_ = buf.Flush()
			_ = conn.Close()
		}
	}
	s.dead = true
}

// pieces cuts s into pieces of about n bytes, never inside a character: a provider's chunks are
// JSON strings, which hold whole characters.
func pieces(s string, n int) []string {
	if n <= 0 || n >= len(s) {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		cut := n
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s == "" {
		return out
	}
	return append(out, s)
}

func textPieces(rep Reply) []string {
	if rep.Text == "" {
		return nil
	}
	n := rep.TextChunk
	if n <= 0 {
		n = 4
	}
	return pieces(rep.Text, n)
}

func args(tc message.ToolCall) string {
	if len(tc.Arguments) == 0 {
		return "{}"
	}
	return string(tc.Arguments)
}
