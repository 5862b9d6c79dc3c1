// Package engine is the server's run engine: it takes runs in, schedules them, executes them
// and cancels them, on the metadata database (server/internal/metadb) and the runs' event logs
// (server/internal/stream). The server's root checks the requests, and tells the engine what a
// run executes through Host.
//
// A run is submitted (Runner.Submit) once its request is checked: the engine applies its
// multitask strategy, inserts it and places it in its thread's slot (Slots), which keeps a
// thread's runs in a process one at a time and in the order they were created; the slot's
// current run goes to the Queue. The queue delivers it to the runner's exec, which claims the
// run's lease (metadb.DB.ClaimRun, which keeps the same order, and the tenant under its limit,
// across processes sharing the database) and executes it in named steps: due, enterTenant,
// claim, start, openLog, begin, prepareGraph, runGraph (Host.Attempt's Execute), settle,
// undoIfRolledBack, prepareOutput, writeStatus, report, requeue, and end. A run that must wait
// returns a *Retry to the queue.
//
// While a run executes, its lease is renewed with every other one every heartbeat (Leases); a
// lease lost stops the run, and the reaper (Runner.Reap) resumes, from its last checkpoint, a run
// whose worker stopped heartbeating. A cancel (Runner.Cancel) stops a run through its context,
// in this process or, over the bus, in the replica executing it; rollback restores the thread's
// state. A finished stateless run's thread is hidden at once and deleted in a batch with others
// (Batcher, Host.DeleteThreads). The workers that bound the runs executing at once are Workers.
//
// Stream events are numbered and shown to readers by the run's stream.Log; a resumable run's
// (every run's, with a bus) are written to the database by the outbox (stream.Outbox), through
// Events.
package engine
