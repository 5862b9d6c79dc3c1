// Package server is trellis's Agent Protocol server: the HTTP API of the LangGraph platform,
// close enough that the official LangGraph SDK clients drive it unchanged, in front of graphs
// compiled with package graph.
//
// # Starting a server
//
// Register each graph with a [GraphSpec] whose Build function compiles it on the checkpoint
// saver and store the server opens, then serve:
//
//	s, err := server.New(server.Config{
//		Graphs: []server.GraphSpec{{ID: "agent", Build: func(d server.Deps) (graph.Runnable, error) {
//			return myGraph.Compile(graph.CompileOptions{Saver: d.Saver, Store: d.Store})
//		}}},
//		Dev: true, // no auth; Serve then accepts loopback listeners only
//	})
//	ln, _ := net.Listen("tcp", "127.0.0.1:2024")
//	err = s.Serve(ctx, ln) // until ctx ends, then a graceful shutdown
//
// With Config.DatabaseURL empty the server keeps everything in one SQLite file under
// Config.DataDir; with a Postgres URL, in Postgres. Its own tables (threads, runs, the event logs
// of resumable streams) are migrated at start, as are the saver's and the store's.
//
// # What a client sees
//
// Each graph is an assistant whose assistant_id is [AssistantID] of the graph ID (the graph ID
// itself is accepted too). Threads hold conversations; a run executes an assistant on a thread
// (or on a throwaway thread, for the stateless /runs routes) and produces a stream of events
// named as LangGraph names them: metadata first, then values, updates, messages (tuples),
// messages/partial, custom, debug, tasks and checkpoints as requested, error if it failed, and
// end. Every event has an id, so a client that reconnects with Last-Event-ID receives the rest
// with no gap and no duplicate. A run that pauses at an interrupt ends its stream with a values
// event holding "__interrupt__"; the next run on the thread resumes it with
// {"command": {"resume": value}}.
//
// # Runs
//
// Runs execute through a [Queue]: [LocalQueue] runs them in this process with a concurrency
// limit. Runs of one thread never overlap: a second run waits (multitask_strategy enqueue),
// is refused with 409 (reject, the default), or cancels the first (interrupt, rollback). A
// run's user, tenant and permissions reach tools as tool.CallInfo.
//
// # Auth and tenants
//
// Without Dev, requests need an API key or an HS256 JWT (see [AuthConfig]). The principal's
// tenant scopes every thread, run and store item: another tenant's IDs answer 404.
//
// See docs/server.md for the routes, the settings and what is not done yet.
package server
