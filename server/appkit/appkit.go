// Package appkit is what an application's HTTP routes and graphs share, so that every app
// answers, authenticates and streams the same way instead of writing its own copy:
//
//   - [JSON] and [Error] answer as the API does, with the API's one error shape:
//     {"detail": "what was wrong", "hint": "what to do"} ([Fail], [Problem]);
//   - [Caller] and [Principal] are the strict principal lookup: the principal that
//     server.AppDeps.Guard (or the appstream kit) put in the request, and 401 when there is
//     none. The server's guard gives server.DevPrincipal in dev mode and only then; nothing
//     here falls back to it;
//   - [EmitText] streams text a node wrote itself (a rule-written answer, a template) on the
//     run's messages stream as a model streams its tokens, in word-sized [Chunks];
//   - [LastUser] and [UserTurns] read a conversation;
//   - [Texts] are the sentences an app shows its users, by name and language, read strictly
//     from a data file the app embeds ([ParseTexts]), and [Fill] fills their {placeholders};
//   - [Every] runs an app's background chore (a sweep of idle sessions) on a ticker, as the
//     server runs its own, from Build until AppParts.Close stops it.
//
// A route:
//
//	mux.Handle("GET /api/v1/notes", d.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//		p, ok := appkit.Caller(w, r)
//		if !ok {
//			return
//		}
//		notes, err := list(r.Context(), p.Tenant, p.User)
//		if err != nil {
//			appkit.Error(w, err)
//			return
//		}
//		appkit.JSON(w, http.StatusOK, notes)
//	})))
package appkit

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/internal/periodic"
)

// JSON answers v as JSON with status.
func JSON(w http.ResponseWriter, status int, v any) { server.WriteJSON(w, status, v) }

// Error answers err in the API's error shape: an *server.APIError (see [Problem]) with its
// status, detail and hint; server.ErrNotFound 404; anything else 500 with its text, so an app
// maps its own errors to a [Problem] first and sanitises what it must not show.
func Error(w http.ResponseWriter, err error) { server.WriteError(w, err) }

// Fail answers status with detail (what was wrong) and hint (what to do; may be empty).
func Fail(w http.ResponseWriter, status int, detail, hint string) {
	Error(w, Problem(status, detail, hint))
}

// Problem is an error the routes answer with status, detail and hint.
func Problem(status int, detail, hint string) *server.APIError {
	return &server.APIError{Status: status, Message: detail, Hint: hint}
}

// BadRequest is a 400 [Problem]: detail is formatted with args.
func BadRequest(hint, format string, args ...any) *server.APIError {
	return Problem(http.StatusBadRequest, fmt.Sprintf(format, args...), hint)
}

// ErrNoCaller is the 401 of a request without a principal.
var ErrNoCaller = Problem(http.StatusUnauthorized, "the request has no authenticated caller",
	"send a bearer token (Authorization: Bearer ...) or an API key (X-Api-Key); the app's routes are behind the API's authentication")

// Principal is the caller of a request: the principal the server's guard (AppDeps.Guard, or the
// appstream kit) authenticated, which is server.DevPrincipal in dev mode and only then. A
// request with none, or one without a tenant or a user, is [ErrNoCaller]: there is no fallback.
func Principal(r *http.Request) (server.Principal, error) {
	p, ok := server.PrincipalFrom(r.Context())
	if !ok || p.Tenant == "" || p.User == "" {
		return server.Principal{}, ErrNoCaller
	}
	return p, nil
}

// Caller is [Principal] for a handler: on no caller it answers 401 (with WWW-Authenticate, as
// the API does) and reports false.
func Caller(w http.ResponseWriter, r *http.Request) (server.Principal, bool) {
	p, err := Principal(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="trellis"`)
		Error(w, err)
		return p, false
	}
	return p, true
}

// Guard is d.Guard, which authenticates an app's routes as the API's are. An app built outside
// a server (`trellis run`, a test that calls Build itself) may have none: then every request is
// answered 401, so a route is never open by accident.
func Guard(d server.AppDeps) func(http.Handler) http.Handler {
	if d.Guard != nil {
		return d.Guard
	}
	return func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Fail(w, http.StatusUnauthorized, "the app has no AppDeps.Guard to authenticate with", "serve the app with trellis serve (server.New), which hands Build its guard")
		})
	}
}

// Chunks cuts text into the word-sized pieces a model's stream would give: each piece after the
// first starts with the white space before its word, so the pieces joined are text again.
func Chunks(text string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if space && !inSpace && i > start && strings.TrimSpace(text[start:i]) != "" {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = space
	}
	switch rest := text[start:]; {
	case rest == "":
	case strings.TrimSpace(rest) == "" && len(out) > 0:
		out[len(out)-1] += rest // trailing white space stays with the last word
	default:
		out = append(out, rest)
	}
	return out
}

// EmitText streams text on the run's messages stream (stream_mode "messages") as the tokens of
// the assistant message id, a new ID when id is empty, in [Chunks], and returns the ID: a node
// that writes an answer itself shows it as a model's answer is shown. Each chunk's metadata is
// meta (such as {"provider": "offline"}) with the node's name added. Outside a run it sends
// nothing.
func EmitText(ctx context.Context, id, text string, meta map[string]any) string {
	if id == "" {
		id = message.NewID()
	}
	info, _ := graph.InfoFrom(ctx)
	md := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		md[k] = v
	}
	if _, ok := md["node"]; !ok {
		md["node"] = info.Node
	}
	for _, c := range Chunks(text) {
		graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: id, Role: message.RoleAssistant, Content: c}, Metadata: md})
	}
	return id
}

// LastUser is the text of the conversation's last user message, "" when there is none.
func LastUser(msgs []message.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == message.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

// UserTurns counts the conversation's user messages: the number of turns it has had.
func UserTurns(msgs []message.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == message.RoleUser {
			n++
		}
	}
	return n
}

// Every calls fn every d on a goroutine of its own, the way the server runs its own chores (TTL
// sweeps, cron ticks), until stop is called: stop cancels fn's context and waits for a call under
// way to return. An app starts its chores in Build and calls stop in AppParts.Close. A d of zero
// or less is refused.
func Every(d time.Duration, fn func(ctx context.Context)) (stop func(), err error) {
	if d <= 0 {
		return nil, fmt.Errorf("appkit: Every needs a positive interval, got %v", d)
	}
	if fn == nil {
		return nil, fmt.Errorf("appkit: Every needs a function to call")
	}
	return periodic.Every(d, fn), nil
}
