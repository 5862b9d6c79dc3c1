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
//			return graph.Erase(myGraph.Compile(graph.CompileOptions{Saver: d.Saver, Store: d.Store}))
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
// itself is accepted too); clients create more of a graph, with a configuration, metadata and
// versions of their own, through POST /assistants (those belong to the creating tenant).
// Threads hold conversations; a run executes an assistant on a thread
// (or on a throwaway thread, for the stateless /runs routes) and produces a stream of events
// named as LangGraph names them: metadata first, then values, updates, messages (tuples),
// messages/partial, custom, debug, tasks, checkpoints and LangChain callback events as
// requested, error if it failed, and end. Every event has an id, so a client that reconnects
// with Last-Event-ID receives the rest with no gap and no duplicate. A run that pauses at an interrupt ends its stream with a values
// event holding "__interrupt__"; the next run on the thread resumes it with
// {"command": {"resume": value}}.
//
// Messages cross the API in LangChain's shape ({"type": "ai", "content", "tool_calls":
// [{"id", "name", "args"}], ...}); input may also use trellis's ({"role": "user", ...}). The
// conversion happens at the API's edge only: the graphs keep message.Message.
//
// # Runs
//
// Runs execute through a [Queue]. The default is [RiverQueue]: a run starts at once when the
// process has a free worker, and otherwise waits as a River job in the server's own database
// (riversqlite on SQLite, riverpgxv5 on Postgres); either way its record outlives the process
// that accepted it. [LocalQueue] keeps runs in memory instead.
//
// A worker executing a run holds the run's lease and renews it every Config.Heartbeat. A run
// whose lease is three heartbeats old has lost its worker (the process died): every server
// looks for such runs every heartbeat and schedules them again, and the graph continues from
// the thread's last checkpoint, so nodes that had finished do not run again. A run that fails
// with an error wrapping [ErrTransient] (or a provider's 429/5xx) is retried the same way, with
// backoff, up to Config.MaxRunAttempts starts; Config.RunTimeout ends runs that take too long;
// Config.MaxRunsPerTenant keeps one tenant from taking every worker, across every server
// sharing the database.
//
// Runs of one thread never overlap, and execute in the order they were created, across every
// server sharing the database (a run's claim checks the thread's other runs): a second run
// waits (multitask_strategy enqueue),
// is refused with 409 (reject, the default), or cancels the first (interrupt, rollback). A
// run's user, tenant and permissions reach tools as tool.CallInfo.
//
// # Replicas
//
// Several servers may share one Postgres database. The one executing a run publishes its
// stream events, and cancellations are broadcast, through Redis pub/sub (Config.RedisURL) or
// else Postgres LISTEN/NOTIFY; a server asked for the stream of a run executing elsewhere
// follows it, reading from the database whatever the bus lost. With a bus every run's events
// are written to the database: tokens in batches within 50 ms, every other event before a
// reader sees it (docs/server.md, "When an event is durable").
//
// # Auth and tenants
//
// Without Dev, requests need an API key or a JWT, signed with a shared secret (HS256) or with a
// key the identity provider publishes as a JWKS (RS256, ES256, EdDSA, ...; see [AuthConfig]). The principal's
// tenant scopes every thread, run and store item: another tenant's IDs answer 404.
//
// # Layout
//
// The package's root keeps Config, the routes and the API types. Internal packages hold parts
// that need nothing of the server: server/internal/lcwire the LangChain wire formats (messages,
// state values, run input, checkpoint and task events as the LangGraph API renders them),
// server/internal/auth JWT verification and the JWKS cache (AuthConfig and Principal stay
// here), server/internal/limits the tenants' request rates and open streams, in the
// process or in Redis (ErrLimited and the 429 answers stay here), server/internal/lcstream the
// run's stream (stream modes to SSE events, the events mode, the token encoder),
// server/internal/metadb
// the metadata database: threads, runs, their events and leases, assistants and crons, on
// SQLite or Postgres, as rows of its own that meta.go converts to the API types (Thread, Run,
// Cron, ...), with the per-user scoping and the 404s; and server/internal/stream
// the runs' event logs, the hub that keeps them, the bus between replicas, the outbox, which
// writes the events to the database and the bus, and the mirror, which follows a run another
// replica executes (both reach the database through interfaces meta.go and bus.go implement).
//
// The run engine is server/internal/engine: it submits, schedules, claims, executes, cancels,
// recovers and reaps runs, on the metadata database and the stream logs. The root's runner
// (runs.go) is its Host: it checks run requests (run_create.go), runs a run's graph under its
// request, with the run's identity, telemetry and budgets (run_graph.go), follows its progress
// (progress.go) and sends its webhook (webhook.go); it holds no *Server, only the narrow views
// in runnerDeps.
//
// See docs/server.md for the routes, the settings and what is not done yet.
package server
