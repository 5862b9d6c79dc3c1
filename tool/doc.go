// Package tool gives models hands: typed tools built from Go functions, tools loaded from
// elsewhere (see the mcp subpackage), and the executor that runs the calls a model asks for.
//
// # A tool from a function
//
// Declare the arguments as a struct; its JSON Schema is what the model sees. Field tags add
// descriptions, allowed values and bounds:
//
//	type forecastArgs struct {
//		City  string `json:"city" jsonschema:"the city to forecast"`
//		Units string `json:"units,omitempty" enum:"metric,imperial" default:"metric"`
//		Days  int    `json:"days" minimum:"1" maximum:"14"`
//	}
//
//	forecast, err := tool.New("forecast", "Weather forecast for a city.",
//		func(ctx context.Context, a forecastArgs) (Forecast, error) { ... })
//
// Before the function runs, the arguments are checked against the schema. A model that writes
// {"city": 5, "days": 30} gets back, as an error result it can read and act on:
//
//	tool: invalid arguments for "forecast": city: expected a string, got integer 5;
//	days: must be at most 14, got 30. Correct the arguments ...
//
// The function's return value becomes the [Result]: a string is text, a struct is structured JSON,
// and a [*Result] gives full control, including a Command for the graph to apply as a state update.
//
// [NewRaw] builds a tool from a JSON Schema given as JSON (a graph's input, say) with the same
// validation. The tooltest subpackage is a conformance suite for any [Tool] implementation.
//
// # What a tool can see
//
// Per-call context that must not appear in the schema (the user, the tenant, their permissions,
// the call ID, the graph state, the store) travels in the context. The graph's tool node sets it
// with [WithCallInfo]; a tool reads it with [CallInfoFrom], [StateFrom] and [StoreFrom].
//
// # Running calls
//
// An [Executor] runs a model's parallel tool calls concurrently and returns one tool message per
// call, in call order. Whatever goes wrong becomes an error result the model can read, never a
// crash of the run: an unknown tool (with a "did you mean"), malformed JSON, wrong argument types,
// a refused permission, a tool disabled for the tenant, an error, a panic, or a tool that does not
// answer within its timeout. Its options add:
//
//   - RBAC: each tool's [Policy] lists the permissions it needs; [RequirePermissions] (the
//     default) compares them with the caller's, or supply your own Authorize function;
//   - tenants: [Tenants] switches tools on and off per tenant;
//   - filters: a [Redactor] hides secrets (values you give it and common credential shapes) and
//     [LabelExternal] wraps external content as data so instructions inside it are not obeyed;
//     [Truncate] keeps one huge result from filling the context.
//
// [Executor.Specs] lists the tools a caller may use, to offer the model only those.
package tool
