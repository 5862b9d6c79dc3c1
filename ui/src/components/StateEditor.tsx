// StateEditor updates a thread's state as a node would (POST /threads/{id}/state): at the
// newest checkpoint, or at an older one, which forks the thread from there.
import { useState } from "react";
import { api } from "../api";
import { ErrorBox } from "./Json";

export function StateEditor({ tid, checkpointId, initial, nodes, onSaved, onClose, title }: {
  tid: string;
  checkpointId?: string;
  initial: unknown;
  nodes: string[];
  onSaved: (newCheckpoint: string) => void;
  onClose: () => void;
  title: string;
}) {
  const [text, setText] = useState(JSON.stringify(initial, null, 2));
  const [asNode, setAsNode] = useState("");
  const [err, setErr] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setErr(null);
    let values: unknown;
    try {
      values = JSON.parse(text);
    } catch (e) {
      setErr(new Error("The values are not JSON: " + (e as Error).message));
      return;
    }
    setBusy(true);
    try {
      const body: Record<string, unknown> = { values };
      if (checkpointId) body.checkpoint_id = checkpointId;
      if (asNode) body.as_node = asNode;
      const out = await api<{ checkpoint: { checkpoint_id: string } }>("POST", `/threads/${tid}/state`, body);
      onSaved(out.checkpoint.checkpoint_id);
    } catch (x) {
      setErr(x);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-label="state editor" className="card flex flex-col gap-2 border-amber-300 dark:border-amber-800">
      <h3 className="font-medium">{title}</h3>
      <p className="muted text-xs">
        The values are applied as the update of a node, through the state's reducers: a message with the ID of one already there replaces it.
      </p>
      <label className="text-sm">Values (JSON)
        <textarea aria-label="values" className="input mt-1 font-mono text-xs" rows={10} value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <label className="text-sm">As node
        <select className="input mt-1" value={asNode} onChange={(e) => setAsNode(e.target.value)}>
          <option value="">(the node that wrote last)</option>
          {nodes.map((n) => <option key={n} value={n}>{n}</option>)}
        </select>
      </label>
      <ErrorBox error={err} />
      <div className="flex gap-2">
        <button className="btn-primary" disabled={busy} onClick={() => void save()}>Save as a new checkpoint</button>
        <button className="btn" onClick={onClose}>Close</button>
      </div>
    </section>
  );
}
