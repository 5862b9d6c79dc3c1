// Package react is the ReAct agent: a model and its tools in a loop, until the model answers
// without calling a tool.
//
// [New] takes the model and, optionally, [Options]. The agent streams tokens into the graph's
// messages stream, runs parallel tool calls through a tool.Executor, stops at a turn limit, can
// ask for a structured final answer, and can pause for a person's approval before chosen tools
// (agent.HumanInterrupt, the Agent Inbox schema):
//
//	a, err := react.New(m, &react.Options{
//		Tools:   []tool.Tool{search},
//		Prompt:  "You answer questions about listings.",
//		Approve: []string{"send_email"},
//	})
//	out, err := a.Invoke(ctx, react.State{Messages: []message.Message{message.User("hi")}})
//
// A nil *Options is an agent named "agent" with no tools and no prompt, which stops after 25
// model calls in a run.
//
// # Per-call context, direct answers, approvals
//
// Options.Context rebuilds the system prompt and injected context (memories, documents) for
// every model call from the current state and the run ([PromptInput]: config, thread, store),
// without storing them in the state. Tools named in Options.ReturnDirect end the run with their
// result as the answer. Approvals (Options.Approve, Options.ApproveIf) pause in the Agent Inbox's
// wire shape: a one-element list of agent.HumanInterrupt out, a one-element list of
// agent.HumanResponse in.
//
// # Long conversations
//
// Before every model call the agent repairs tool calls that lost their results
// (conversation.RepairHistory). With Options.Compaction it also keeps the conversation within a
// token budget: it compacts its state before a call over budget, and after a provider reports
// model.ErrContextWindowExceeded (then retries once); see package agent/conversation.
//
// # Tool nodes for other states
//
// A tool's Command updates state of any type: [ApplyCommand] writes a tool.Update (state keys to
// values), a value of the state type, or a struct with matching JSON keys through graph.Write,
// and names the keys the state lacks. [NewToolNode] is the tool node for an application's own
// state type; the ReAct agent's tool node uses the same machinery.
//
// A ReAct agent joins a supervisor with supervisor.(*Supervisor).AddReAct, and becomes a tool
// (for another agent or an MCP client) with agent.GraphTool.
package react
