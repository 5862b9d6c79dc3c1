// Package worker runs a skill's tools in isolated worker processes, a warm pool of them per
// skill, and replaces each worker after every call so that nothing one call leaves behind (temp
// files, in-process state) reaches the next.
//
// A worker is a small HTTP server with two routes: GET /schema lists its tools (name,
// description, JSON Schema of the arguments) and POST /execute runs one ({"tool": name,
// "params": {...}} in, {"result": {...}} or {"error": "..."} out). [Handler] serves a set of
// tool.Tool that way, and [ServeIfChild] turns the current executable into a worker when the
// pool started it as one, so a Go program (or a test binary) can be its own worker; [Serve] is
// the same for a worker that is a program of its own. Either builds the tools from the worker's
// [Settings] (the skill's environment), so a worker's code never reads the environment.
//
// A [Pool] starts Spec.PoolSize workers of each skill through a [Runtime]: [Subprocess] (the
// default: a child process per worker, started with only the skill's environment, never the
// server's, serving HTTP on one end of a Unix socket pair it inherits, so a call neither dials
// nor polls) or [Docker] (a container per worker through the Docker Engine API, on a bridge
// network with a memory limit). A worker says it is ready with a line on its standard output;
// the pool fetches a skill's schema once, from its first worker ([Pool.Schema]), polling /schema
// with retries for up to 15 seconds, and polls a later worker only when its runtime cannot tell
// that it is ready (see [ReadyInstance]). [Pool.Execute] checks a worker out, posts the call with
// the skill's timeout, and replaces the worker in the background whatever happened (the fresh
// worker is started at once, beside the stop of the used one), so the pool stays warm;
// [Pool.StopAll] stops every worker and waits for their replacements, leaving no process or
// container behind.
package worker
