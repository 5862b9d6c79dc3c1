package tool

import (
	"context"
	"slices"

	"github.com/trellis-go/trellis/internal/runctx"
	"github.com/trellis-go/trellis/store"
)

// CallInfo is the per-call context a tool can read without it appearing in its schema: who is
// calling, on whose behalf, with which permissions, and the graph state and store of the run.
//
// The code that runs tools (the graph's tool node, the MCP server, a test) puts a CallInfo in the
// context with [WithCallInfo]; the [Executor] fills CallID and Tool for each call. State and Store
// are opaque here so that this package needs neither the graph nor the store; read them with
// [StateFrom] and [StoreFrom].
type CallInfo struct {
	// CallID is the model's ID for this tool call.
	CallID string
	// Tool is the name of the tool being called.
	Tool string
	// User and Tenant identify the caller; both may be empty in a single-user setup.
	User   string
	Tenant string
	// Permissions are what the caller holds; a tool's [Policy] lists what it requires. The
	// permission "*" grants everything.
	Permissions []string
	// ThreadID and RunID locate the call in the server's threads and runs, when there are any.
	ThreadID string
	RunID    string
	// State is the graph state the tool node saw, as the graph represents it.
	State any
	// Store is the run's long-term memory store, nil when none.
	Store store.Store
}

// Has reports whether the caller holds permission p, directly or through "*".
func (c CallInfo) Has(p string) bool {
	return slices.Contains(c.Permissions, p) || slices.Contains(c.Permissions, "*")
}

// Missing returns the permissions among required that the caller lacks, in order.
func (c CallInfo) Missing(required []string) []string {
	var missing []string
	for _, p := range required {
		if !c.Has(p) {
			missing = append(missing, p)
		}
	}
	return missing
}

type callInfoKey struct{}

// WithCallInfo returns a context that carries info.
func WithCallInfo(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, info)
}

// CallInfoFrom returns the CallInfo in ctx, and whether there was one.
func CallInfoFrom(ctx context.Context) (CallInfo, bool) {
	info, ok := ctx.Value(callInfoKey{}).(CallInfo)
	return info, ok
}

// StateFrom returns the graph state in ctx's CallInfo as an S, and whether it was one.
func StateFrom[S any](ctx context.Context) (S, bool) {
	info, _ := CallInfoFrom(ctx)
	s, ok := info.State.(S)
	return s, ok
}

// StoreFrom returns the store in ctx's CallInfo as an S (typically an interface the tool needs,
// such as one with Get and Put methods), and whether it was one.
func StoreFrom[S any](ctx context.Context) (S, bool) {
	info, _ := CallInfoFrom(ctx)
	s, ok := info.Store.(S)
	return s, ok
}

// Context returns the typed context of the graph run the tool is called in (what the run
// passed with graph.WithContext, LangGraph's runtime context; what graph.Context returns to
// the calling node) as a T, and whether there is one that is a T. A context that is not a T
// but whose JSON form decodes into one (a map, from a graph that declares no context type) is
// converted. Unlike [CallInfo], which the code running the tools fills, the context comes
// from the run itself: a tool called by a node, by a graph's tool node or by a task sees it.
//
//	type UserContext struct {
//		UserID string `json:"user_id"`
//	}
//
//	lookup := tool.Must(tool.New("my_orders", "The caller's orders.",
//		func(ctx context.Context, a struct{}) ([]Order, error) {
//			uc, ok := tool.Context[UserContext](ctx)
//			if !ok {
//				return nil, errors.New("no user in the run's context")
//			}
//			return orders.Of(uc.UserID), nil
//		}))
func Context[T any](ctx context.Context) (T, bool) { return runctx.As[T](ctx) }

// WithContext returns ctx carrying v as the run's context, for calling tools outside a graph
// run (a test, an MCP server) as a run passing v with graph.WithContext would.
func WithContext(ctx context.Context, v any) context.Context { return runctx.With(ctx, v) }
