package tool

import (
	"context"
	"slices"

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
