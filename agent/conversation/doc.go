// Package conversation keeps a conversation usable as it grows: compaction within a token
// budget, a running summary, follow-up questions, a session title, and the repair of tool calls
// that lost their results. Each function takes the model to use and the messages; none stores
// anything.
//
// # Compaction
//
// [Compact] replaces the older part of a conversation with one summary written by a cheap model,
// keeps the latest turns verbatim, and never separates a tool call from its result.
// [CompactIfNeeded] does so only over a token budget (counted with model/tokens):
//
//	msgs, did, err := conversation.CompactIfNeeded(ctx, msgs, &conversation.CompactOptions{Model: fast, MaxTokens: 24000})
//
// Two ways to use it in a run: react.Options.Compaction compacts the ReAct agent's state before a
// call over budget and after a provider reports model.ErrContextWindowExceeded (then retries
// once); [CompactingModel] wraps any model to do the same to each request without touching the
// state. A [Compactor] (from [NewCompactor]) is the same machinery for an application's own agent
// loop. [CompactOptions] requires its Model; every zero field is a documented default.
//
// # Summary, hints, title
//
// [Summarize] keeps a running summary (nil [SummarizeOptions] for the default instruction),
// [Hints] suggests three follow-up questions, and [Title] names a session. On the offline model
// each gives a deterministic, labelled answer.
//
// # History repair
//
// [RepairHistory] answers tool calls that lost their results (a crash, an interrupt), so the
// next model call never fails on them; the ReAct agent applies it before every call, and
// compaction before it summarises.
package conversation
