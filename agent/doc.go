// Package agent is the shared base of trellis's prebuilt agent patterns, and a guide to the
// packages that hold them. Everything in them is built from public graph, model and tool APIs: an
// application can copy any pattern and change it.
//
// # Where things are
//
//   - [github.com/trellis-go/trellis/agent/react]: the ReAct agent, a model and its tools in a
//     loop (react.New, react.State), and the tool node for an application's own state type
//     (react.NewToolNode, react.ApplyCommand).
//   - [github.com/trellis-go/trellis/agent/supervisor]: a classifier that routes each request to
//     specialist agents, runs them in parallel and writes one answer (supervisor.New); agents are
//     functions, ReAct agents or any compiled graph; a worker and a reviewer in a bounded loop
//     (supervisor.NewReview).
//   - [github.com/trellis-go/trellis/agent/conversation]: what keeps a conversation usable:
//     compaction within a token budget (conversation.Compact, conversation.CompactingModel),
//     a running summary, follow-up hints and a session title (conversation.Summarize, Hints,
//     Title), and the repair of tool calls that lost their results (conversation.RepairHistory).
//
// Constructors take their required arguments, then a pointer to an options struct whose nil
// value and zero fields are documented defaults:
//
//	a, err := react.New(m, &react.Options{Tools: []tool.Tool{search}, Prompt: "You answer questions about listings."})
//	sup := supervisor.New(strong, &supervisor.Options{ClassifierModel: fast})
//
// # What this package holds
//
// What more than one pattern, or an application's own agent, uses:
//
//   - [StreamModel] calls a model with streaming, forwarding its tokens to the graph's messages
//     stream, and returns the whole response; the ReAct agent and the supervisor's synthesizer
//     call models through it.
//   - [AskHuman] pauses a run for a person in the Agent Inbox's wire shape: a one-element list of
//     [HumanInterrupt] out, a one-element list of [HumanResponse] in ([ParseHumanResponse]). The
//     ReAct agent's tool approvals (react.Options.Approve) ask through it.
//   - [TokenBudget] counts a run's tokens and refuses further model calls, with a
//     *[BudgetError], once it is spent; [BudgetedModel] reads a per-run budget from the context
//     ([WithTokenBudget]).
//   - [GraphTool] wraps any graph.Runnable as a tool.Tool (its input keys are the parameters, its
//     final output the JSON result), which tool/mcp can serve to MCP clients.
package agent
