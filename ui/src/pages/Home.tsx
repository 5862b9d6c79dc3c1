// The home page (the apps and assistants the server offers) and an app's landing page (its
// name, description and assistants; the app's own pages are added to it by the app).
import type { Catalog } from "../App";
import { Link, ui } from "../router";

export function Home({ catalog }: { catalog: Catalog | null }) {
  if (!catalog) return <p className="muted">Loading…</p>;
  return (
    <div className="flex flex-col gap-6">
      <section>
        <h1 className="mb-3 text-xl font-semibold">Applications</h1>
        <ul className="grid gap-3 sm:grid-cols-2 xl:grid-cols-3" aria-label="applications">
          {catalog.apps.map((a) => (
            <li key={a.name} className="card">
              <Link to={ui("/apps/" + a.name)} className="font-medium text-emerald-700 hover:underline dark:text-emerald-400">{a.name}</Link>
              <p className="muted mt-1 text-sm">{a.description}</p>
              <p className="mt-2 text-xs">{(a.graphs ?? []).length} assistant{(a.graphs ?? []).length === 1 ? "" : "s"}{a.has_routes ? " · own API" : ""}</p>
            </li>
          ))}
        </ul>
        {catalog.apps.length === 0 && <p className="muted">This server runs no application.</p>}
      </section>
      <section>
        <h2 className="mb-3 text-lg font-semibold">Assistants</h2>
        <AssistantList assistants={catalog.assistants} />
      </section>
    </div>
  );
}

function AssistantList({ assistants }: { assistants: Catalog["assistants"] }) {
  return (
    <ul className="grid gap-3 sm:grid-cols-2 xl:grid-cols-3" aria-label="assistants">
      {assistants.map((a) => (
        <li key={a.assistant_id} className="card">
          <div className="flex items-baseline justify-between gap-2">
            <Link to={ui("/assistants/" + encodeURIComponent(a.assistant_id))} className="font-medium text-emerald-700 hover:underline dark:text-emerald-400">{a.name}</Link>
            <span className="muted font-mono text-xs">{a.graph_id}</span>
          </div>
          {a.description && <p className="muted mt-1 text-sm">{a.description}</p>}
          <div className="mt-2 flex gap-3 text-xs">
            <Link className="underline" to={ui("/assistants/" + encodeURIComponent(a.assistant_id))}>Chat</Link>
            <Link className="underline" to={ui("/assistants/" + encodeURIComponent(a.assistant_id) + "/graph")}>Graph</Link>
            <Link className="underline" to={ui("/assistants/" + encodeURIComponent(a.assistant_id) + "/threads")}>Threads</Link>
          </div>
        </li>
      ))}
    </ul>
  );
}

export function AppLanding({ catalog, name }: { catalog: Catalog | null; name: string }) {
  if (!catalog) return <p className="muted">Loading…</p>;
  const app = catalog.apps.find((a) => a.name === name);
  if (!app) return <div className="card"><h1 className="text-lg font-semibold">No app named {name}</h1></div>;
  const graphs = app.graphs ?? [];
  const mine = catalog.assistants.filter((a) => graphs.includes(a.graph_id));
  return (
    <div className="flex flex-col gap-4">
      <header>
        <h1 className="text-xl font-semibold">{app.name}</h1>
        <p className="muted mt-1">{app.description}</p>
        {app.has_routes && <p className="mt-1 text-sm">Its own API is served under <code className="code">/apps/{app.name}/</code>.</p>}
      </header>
      <section>
        <h2 className="mb-2 font-semibold">Assistants</h2>
        <AssistantList assistants={mine} />
        {mine.length === 0 && <p className="muted">No assistant.</p>}
      </section>
    </div>
  );
}
