package server

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
)

// Programmable authorization (Config.Authorize), as LangGraph's auth.on handlers: after a
// request is authenticated, the hook is called with who asks (the principal), what for (the
// resource and the action of the route) and the request itself, and may refuse it, or let it
// through with filters and metadata:
//
//   - Filters are metadata a record must carry to exist for the request: a thread (on every
//     route that reaches a thread: the thread's own, its state and history, its runs and
//     streams, and runs created on it) or an assistant (on the assistant routes) without them
//     answers 404, and searches and counts list only records that have them.
//   - Metadata is stamped on what the request creates: a thread (POST /threads, or a run on a
//     new thread), a run, an assistant; and kept on a thread whose metadata is patched.
//
// The hook adds to the tenant and per-user scoping; it cannot widen them.

// Resource is what an API route acts on.
type Resource string

// The resources of the API's routes.
const (
	ResourceAssistants Resource = "assistants"
	ResourceThreads    Resource = "threads"
	ResourceRuns       Resource = "runs"
	ResourceCrons      Resource = "crons"
	ResourceStore      Resource = "store"
)

// Action is what a route does to its resource.
type Action string

// The actions of the API's routes.
const (
	ActionCreate Action = "create"
	ActionRead   Action = "read"
	ActionUpdate Action = "update"
	ActionDelete Action = "delete"
	ActionSearch Action = "search"
)

// AuthRequest is what Config.Authorize decides on.
type AuthRequest struct {
	Principal Principal
	Resource  Resource
	Action    Action
	// Route is the route's pattern ("POST /threads/{tid}/runs").
	Route string
	// Request is the HTTP request; its body is not read yet (read it only if you must, and
	// put back what you read).
	Request *http.Request
}

// AuthResult is what Config.Authorize allows: see the package's notes above.
type AuthResult struct {
	// Filters are metadata key/values the records the request reaches must have.
	Filters map[string]any
	// Metadata is stamped on the records the request creates.
	Metadata map[string]any
}

// Authorizer decides on a request (Config.Authorize). An error refuses it: an *APIError is
// answered as it is, any other error with 403 and its text. A nil *AuthResult allows the request
// with no filter or metadata.
type Authorizer func(ctx context.Context, req AuthRequest) (*AuthResult, error)

// ErrForbidden is the kind of the 403 a refused request gets.
var ErrForbidden = errors.New("server: forbidden")

// Forbidden makes the refusal an Authorizer returns, with a hint for the caller.
func Forbidden(message, hint string) error {
	return &APIError{Status: http.StatusForbidden, Message: message, Hint: hint, kind: ErrForbidden}
}

// authDecision is the hook's answer for a request, in its context.
type authDecision struct {
	resource Resource
	action   Action
	res      AuthResult
}

type authDecisionKey struct{}

// routeAccess names the resource and action of a route pattern ("METHOD /path").
func routeAccess(pattern string) (Resource, Action) {
	method, path, _ := strings.Cut(pattern, " ")
	var res Resource
	switch {
	case strings.HasPrefix(path, "/assistants"):
		res = ResourceAssistants
	case strings.Contains(path, "/runs/crons"):
		res = ResourceCrons
	case strings.HasPrefix(path, "/runs"), strings.HasPrefix(path, "/threads/{tid}/runs"), path == "/threads/{tid}/ws":
		res = ResourceRuns
	case strings.HasPrefix(path, "/threads"):
		res = ResourceThreads
	case strings.HasPrefix(path, "/store"):
		res = ResourceStore
	default:
		return "", ""
	}
	last := path[strings.LastIndex(path, "/")+1:]
	switch {
	case last == "search" || last == "count" || last == "namespaces" || last == "versions":
		return res, ActionSearch
	case method == http.MethodDelete || last == "prune":
		return res, ActionDelete
	case method == http.MethodPatch || last == "cancel" || last == "latest" || (res == ResourceThreads && method == http.MethodPost && last == "state"):
		return res, ActionUpdate
	case method == http.MethodGet || last == "history" || last == "checkpoint":
		if res == ResourceRuns && (last == "runs") {
			return res, ActionSearch
		}
		return res, ActionRead
	case method == http.MethodPut:
		return res, ActionUpdate
	}
	return res, ActionCreate
}

// authorize calls Config.Authorize for a route's requests (nil: h as it is).
func (s *Server) authorize(pattern string, h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.Authorize == nil {
		return h
	}
	res, act := routeAccess(pattern)
	if res == "" {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		out, err := s.cfg.Authorize(r.Context(), AuthRequest{Principal: p, Resource: res, Action: act, Route: pattern, Request: r})
		if err != nil {
			var ae *APIError
			if !errors.As(err, &ae) {
				ae = &APIError{Status: http.StatusForbidden, Message: err.Error(), kind: ErrForbidden}
			}
			writeError(w, ae)
			return
		}
		d := &authDecision{resource: res, action: act}
		if out != nil {
			d.res = *out
		}
		h(w, r.WithContext(context.WithValue(r.Context(), authDecisionKey{}, d)))
	}
}

func decisionOf(ctx context.Context) *authDecision {
	d, _ := ctx.Value(authDecisionKey{}).(*authDecision)
	return d
}

// authThreadFilters are the filters a thread must match for ctx's request: those of a thread,
// run or cron route.
func authThreadFilters(ctx context.Context) map[string]any {
	if d := decisionOf(ctx); d != nil && d.resource != ResourceAssistants && d.resource != ResourceStore {
		return d.res.Filters
	}
	return nil
}

// authAssistantFilters are the filters an assistant must match on an assistant route.
func authAssistantFilters(ctx context.Context) map[string]any {
	if d := decisionOf(ctx); d != nil && d.resource == ResourceAssistants {
		return d.res.Filters
	}
	return nil
}

// authStamp merges the hook's metadata for ctx's request into md (a record it creates).
func authStamp(ctx context.Context, md map[string]any) map[string]any {
	d := decisionOf(ctx)
	if d == nil || len(d.res.Metadata) == 0 {
		return md
	}
	if md == nil {
		md = map[string]any{}
	}
	maps.Copy(md, d.res.Metadata)
	return md
}
