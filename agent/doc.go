// Package agent holds prebuilt agent patterns on the graph runtime, and the conversation helpers
// they share. Everything here is built from public graph, model and tool APIs: an application can
// copy any pattern and change it.
//
// # ReAct
//
// [NewReAct] builds a model and its tools in a loop, until the model answers without calling a
// tool. It streams tokens into the graph's messages stream, runs parallel tool calls through a
// tool.Executor, stops at a turn limit, can ask for a structured final answer, and can pause for a
// person's approval before chosen tools ([HumanInterrupt], the Agent Inbox schema):
//
//	react, err := agent.NewReAct(agent.ReActOptions{
//		Model:   m,
//		Tools:   []tool.Tool{search},
//		Prompt:  "You answer questions about listings.",
//		Approve: []string{"send_email"},
//	})
//	out, err := react.Invoke(ctx, agent.State{Messages: []message.Message{message.User("hi")}})
//
// A tool's Command updates state of any type: [ApplyCommand] writes a tool.Update (state keys to
// values), a value of the state type, or a struct with matching JSON keys through graph.Write, and
// names the keys the state lacks. [NewToolNode] is the tool node for an application's own state
// type; the ReAct agent's tool node uses the same machinery.
//
// ReActOptions.Context rebuilds the system prompt and injected context (memories, documents) for
// every model call from the current state and the run ([PromptInput]: config, thread, store),
// without storing them in the state. Tools named in ReActOptions.ReturnDirect end the run with
// their result as the answer. Approvals pause in the Agent Inbox's wire shape: a one-element list
// of [HumanInterrupt] out, a one-element list of [HumanResponse] in ([ParseHumanResponse]).
//
// [NewReview] (or [Reviewed], as an AgentFunc) runs a worker and a reviewer in a bounded loop: a
// result is approved or sent back with a critique that the worker reads in its next round.
//
// [RepairHistory] answers tool calls that lost their results (a crash, an interrupt), so the next
// model call never fails on them; the ReAct agent applies it before every call.
//
// # Supervisor
//
// A [Supervisor] routes each request to specialist agents. A classifier reads the latest user
// message (and the caller's summary of the conversation so far) and answers with structured
// output: the agents to use, the intent, the filters it extracted, or a clarifying question.
// An ambiguous request ends the run with that question; otherwise the chosen agents run in
// parallel (one graph.Send each) and a synthesizer writes one answer from their results.
//
//	sup := agent.NewSupervisor(agent.SupervisorOptions{Model: strong, ClassifierModel: fast, Filters: filterSchema})
//	sup.Add(agent.Agent{Name: "pbi_metrics_agent", Description: "Power BI usage ...", Run: pbiAgent})
//	sup.AddReAct(agent.Agent{Name: "per_agent", Description: "Project health ..."}, perReAct)
//	g, err := sup.Compile()
//	out, err := g.Invoke(ctx, agent.SupervisorState{Messages: msgs, Summary: summary})
//
// Adding an agent is a registration: a function ([Supervisor.Add]), a ReAct agent
// ([Supervisor.AddReAct]) or any compiled graph ([AddGraphAgent], run as a subgraph so its
// interrupts, checkpoints and tokens flow through). The classifier's prompt and schema are built
// from the registered agents' names, descriptions and examples.
//
// # Compaction
//
// [Compact] replaces the older part of a conversation with one summary written by a cheap model,
// keeps the latest turns verbatim, and never separates a tool call from its result.
// [CompactIfNeeded] does so only over a token budget (counted with model/tokens). Two ways to use
// it in a run: ReActOptions.Compaction compacts the agent's state before a call over budget and
// after a provider reports model.ErrContextWindowExceeded (then retries once); [CompactingModel]
// wraps any model to do the same to each request without touching the state.
//
// # Conversation helpers
//
// [Summarize] keeps a running summary, [Hints] suggests three follow-up questions, and [Title]
// names a session. Each takes a model and messages; on the offline model each gives a
// deterministic, labelled answer.
//
// # Graphs as tools, budgets
//
// [GraphTool] wraps any graph.Runnable as a tool.Tool (its input keys are the parameters, its
// final output the JSON result), which tool/mcp can serve to MCP clients. [TokenBudget] counts a
// run's tokens and refuses further model calls, with a *[BudgetError], once it is spent;
// [BudgetedModel] reads a per-run budget from the context.
package agent
