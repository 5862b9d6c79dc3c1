// Package supervisor routes each request to specialist agents.
//
// A classifier reads the latest user message (and the caller's summary of the conversation so
// far) and answers with structured output ([Route]): the agents to use, the intent, the filters it
// extracted, or a clarifying question. An ambiguous request ends the run with that question;
// otherwise the chosen agents run in parallel (one graph.Send each) and a synthesizer writes one
// answer from their results.
//
//	sup := supervisor.New(strong, &supervisor.Options{ClassifierModel: fast, Filters: filterSchema})
//	sup.Add(supervisor.Agent{Name: "pbi_metrics_agent", Description: "Power BI usage ...", Run: pbiAgent})
//	sup.AddReAct(supervisor.Agent{Name: "per_agent", Description: "Project health ..."}, perReAct)
//	g, err := sup.Compile()
//	out, err := g.Invoke(ctx, supervisor.State{Messages: msgs, Summary: summary})
//
// [New] takes the model that writes the synthesis (and classifies, unless
// Options.ClassifierModel is set) and, optionally, [Options]. Adding an agent is a registration:
// a function ([Supervisor.Add], an [AgentFunc] from a [Task] to an [AgentResult]), a ReAct agent
// ([Supervisor.AddReAct], from react.New) or any compiled graph ([AddGraphAgent], run as a
// subgraph so its interrupts, checkpoints and tokens flow through). The classifier's prompt and
// schema are built from the registered agents' names, descriptions and examples. Every
// registration mistake is reported at once by [Supervisor.Compile].
//
// # Review
//
// [NewReview] (or [Reviewed], as an AgentFunc for a supervisor) runs a worker and a reviewer in
// a bounded loop: a result is approved or sent back with a critique that the worker reads in its
// next round. [ModelReviewer] reviews with a model; on the offline model it reviews by rule.
//
// A summary of the earlier conversation for [State].Summary comes from
// conversation.Summarize.
package supervisor
