// Package telemetry traces model and tool calls with OpenTelemetry and counts their tokens
// against a run's budget.
//
// [Model] wraps a chat model and [Tool] (or [Tools]) wraps tools. Each call becomes a span under
// the span in its context: inside a graph run traced with graph.WithTracer that is the span of
// the node making the call, so a trace reads run → superstep → node → model or tool call. When
// the context holds no recording span the wrappers make no span at all, so they cost next to
// nothing in an untraced process, and an application can wrap its models and tools
// unconditionally.
//
// Model spans follow OpenTelemetry's GenAI conventions: the span is named "chat <model>" and
// carries gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model,
// gen_ai.response.model, gen_ai.usage.input_tokens, gen_ai.usage.output_tokens and
// gen_ai.response.finish_reasons. Tool spans are named "execute_tool <tool>" and carry
// gen_ai.tool.name and gen_ai.tool.call.id; a failed call (an error, or a result marked IsError)
// has error status.
//
// [Model] also counts every call against the token budget in its context
// (agent.WithTokenBudget), which is how the server enforces its per-run token budget: a call
// made once the budget is spent fails with an *agent.BudgetError. Do not wrap a model with both
// [Model] and agent.BudgetedModel, or its calls are counted twice.
package telemetry
