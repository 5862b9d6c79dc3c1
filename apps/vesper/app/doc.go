// Package app is the Vesper Analytics graph: the supervisor, the four
// domain agents of the specification and the response synthesizer, built on
// supervisor.New.
//
//	START → supervisor ─┬─ Send(dayahead_agent)    ─┐
//	                    ├─ Send(price_curve_agent) ─┤
//	                    ├─ Send(pbi_metrics_agent) ─┼─→ synthesizer → END
//	                    ├─ Send(per_agent)         ─┘
//	                    └─ clarifying question → END
//
// The supervisor classifies the request (intent, agents, filters). With no
// model configured, or the offline one, the [RuleRouter] does it by the
// app's rules: [Extract] reads vendors, markets and hub-zones through the
// alias map, years, As-Of files, "top N", stages, health colours and
// relative dates; a capitalised name is resolved against the tenant's live
// projects; each [Domain] is scored by its keywords. With a real model the
// model classifies and the same normalisation runs after it. Either way
// the filters go through entity.Resolve, a follow-up ("What about NP15?")
// inherits the previous request's filters, and a domain's Clarify may turn
// the request into a clarifying question that ends the run at once. The
// caller's summary of the earlier conversation reaches the classifier in
// supervisor.State.Summary.
//
// Every routed agent runs in parallel (graph.Send). An agent takes its
// tools from the registry (tools.AgentTools), less those the tenant
// switched off (tools.Settings). Offline the domain's Plan chooses the
// calls (a SQL statement in the request goes to general_sql_query); with a
// real model the agent is a ReAct tool loop (react.New with the
// domain's prompt and the filter context, at most Config.MaxTurns model
// calls) run as a run of its own, so its reasoning stays out of the
// request's stream. Either way each call runs as the caller of the run's
// tool.CallInfo and its result is formatted by synth before any model sees
// it. A denied or switched-off tool is explained in the answer, never
// skipped.
//
// The synthesizer merges the agents' blocks, adds the Power BI deep links
// (reports.Linker, best effort) and streams the Markdown into the run's
// messages mode. With a real model the model writes the answer from the
// formatted blocks ([SynthesizerPrompt]) and the rules append the Related
// Reports; if that call fails, the rules' composition is the answer. [App.Outcome] reads the intent, agents, tool calls, report
// keys and charts of a finished request, for the chat records.
//
// Adding a domain: see [Domain] and docs/apps/vesper.md.
package app
