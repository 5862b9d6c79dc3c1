// Package stream holds the event logs of runs' streams for the server: [Event], one numbered
// event of a run's stream; [Log], a run's log, which the run appends to and any number of
// readers follow from any position without slowing it; and [Hub], the logs of the runs a process
// executes or follows, kept for a retention after the run ends and bounded in bytes.
//
// [Outbox] writes the events to a database (an [EventWriter], the server's metadata database)
// and publishes them to other processes on the [Bus]: tokens in batches, every other event
// before a reader sees it. A Log only keeps the mark of what was written ([Log.Durable]) under
// a lock of its own ([Log.LockWrites]), so that the writes happen in order. [Mirror] is the log
// of a run another process executes, filled from the bus and, for what the bus lost, from the
// database (a [RunSource]).
package stream
