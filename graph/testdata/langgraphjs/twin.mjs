// The runner the side-by-side scripts share: runs each graph on its own thread with a memory
// saver, streaming values, updates, tasks and checkpoints, then reads the thread's history
// (oldest first: step, source, next, values), and prints everything as one JSON object for the
// Go tests to compare with trellis's.
import { Command, MemorySaver } from "@langchain/langgraph";

const modes = ["values", "updates", "tasks", "checkpoints"];

// runTwins runs graphs (name -> builder of an uncompiled graph) with inputs[name] (an empty
// object when absent); a graph named in resumes is resumed with that value after its first run.
export async function runTwins(graphs, inputs = {}, resumes = {}) {
  const out = {};
  for (const [name, build] of Object.entries(graphs)) {
    const g = build().compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: name } };
    const stream = Object.fromEntries(modes.map((m) => [m, []]));
    const run = async (input) => {
      for await (const [mode, chunk] of await g.stream(input, { ...config, streamMode: modes })) stream[mode].push(chunk);
    };
    await run(inputs[name] ?? {});
    if (name in resumes) await run(new Command({ resume: resumes[name] }));
    const history = [];
    for await (const s of g.getStateHistory(config)) {
      history.push({ step: s.metadata.step, source: s.metadata.source, next: s.next, values: s.values });
    }
    history.reverse();
    out[name] = { ...stream, history };
  }
  process.stdout.write(JSON.stringify(out));
}
