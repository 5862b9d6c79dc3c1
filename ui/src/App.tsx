// The application shell: sign-in when the server wants a credential, the navigation (apps,
// assistants, threads, store), light and dark themes, keyboard shortcuts, and the routes
// (React Router's route objects; main.tsx makes the router).
import { Fragment, lazy, Suspense, useCallback, useEffect, useState } from "react";
import { Outlet, useOutletContext, useParams, useSearchParams, type RouteObject } from "react-router";
import { api, APIError, currentAuth, setAuth, type AppInfo, type Assistant } from "./api";
import { Link, navigate, ui, useLocation } from "./router";
import { ErrorBox } from "./components/Json";
import { Home, AppLanding } from "./pages/Home";
import { Studio } from "./pages/Studio";
import { Threads } from "./pages/Threads";
import { ThreadInspector } from "./pages/Inspector";
import { RunPage } from "./pages/RunPage";
import { Store } from "./pages/Store";
import { Assistants, Crons, Inbox } from "./pages/Manage";
import { Listforge } from "./pages/apps/listforge/Listforge";
import { Rehab } from "./pages/apps/Rehab";
import { AnalystInbox } from "./pages/apps/Analyst";
const Realty = lazy(() => import("./pages/apps/Realty")); // its own chunk: Leaflet loads only there

export type Catalog = { apps: AppInfo[]; assistants: Assistant[] };

function useTheme(): [boolean, () => void] {
  const [dark, setDark] = useState(() => document.documentElement.classList.contains("dark"));
  const toggle = useCallback(() => {
    setDark((d) => {
      const n = !d;
      document.documentElement.classList.toggle("dark", n);
      localStorage.setItem("trellis.theme", n ? "dark" : "light");
      return n;
    });
  }, []);
  return [dark, toggle];
}

function SignIn({ onDone, error }: { onDone: () => void; error?: unknown }) {
  const [kind, setKind] = useState<"key" | "token">("key");
  const [value, setValue] = useState("");
  const [remember, setRemember] = useState(false);
  const [err, setErr] = useState<unknown>(error);
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setAuth({ kind, value: value.trim() }, remember);
    try {
      await api("GET", "/apps");
      onDone();
    } catch (x) {
      setAuth({ kind: "none" }, false);
      setErr(x instanceof APIError && x.status === 401 ? new Error("The server refused this " + (kind === "key" ? "API key" : "token") + ".") : x);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" className="mx-auto mt-16 max-w-sm px-4">
      <form onSubmit={submit} className="card flex flex-col gap-3" aria-label="sign in">
        <h1 className="text-lg font-semibold">Sign in to trellis</h1>
        <p className="muted text-sm">This server asks for a credential: an API key (TRELLIS_API_KEYS) or a token (a JWT).</p>
        <fieldset className="flex gap-4 text-sm">
          <legend className="sr-only">Credential</legend>
          <label className="flex items-center gap-1"><input type="radio" name="kind" checked={kind === "key"} onChange={() => setKind("key")} /> API key</label>
          <label className="flex items-center gap-1"><input type="radio" name="kind" checked={kind === "token"} onChange={() => setKind("token")} /> Token</label>
        </fieldset>
        <label className="text-sm">
          {kind === "key" ? "API key" : "Bearer token"}
          <input className="input mt-1 font-mono" type="password" autoFocus required value={value} onChange={(e) => setValue(e.target.value)} autoComplete="off" />
        </label>
        <label className="flex items-center gap-2 text-sm"><input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} /> Remember on this browser</label>
        <ErrorBox error={err} />
        <button className="btn-primary justify-center" disabled={busy || !value.trim()}>Sign in</button>
      </form>
    </main>
  );
}

const shortcuts: [string, string][] = [
  ["g h", "home"], ["g t", "threads"], ["g s", "store"], ["/", "focus the page's search"], ["t", "light or dark theme"], ["?", "this help"], ["Esc", "close"],
];

export function App() {
  const { path } = useLocation();
  const [dark, toggleTheme] = useTheme();
  const [catalog, setCatalog] = useState<Catalog | null>(null);
  const [needAuth, setNeedAuth] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  const [menu, setMenu] = useState(false);
  const [help, setHelp] = useState(false);

  const load = useCallback(async () => {
    setErr(null);
    try {
      const apps = await api<AppInfo[]>("GET", "/apps");
      const assistants = await api<Assistant[]>("POST", "/assistants/search", { limit: 100, sort_by: "name", sort_order: "asc" });
      setCatalog({ apps, assistants });
      setNeedAuth(false);
    } catch (x) {
      if (x instanceof APIError && x.status === 401) setNeedAuth(true);
      else setErr(x);
    }
  }, []);
  useEffect(() => { void load(); }, [load]);
  useEffect(() => setMenu(false), [path]);

  useEffect(() => {
    let g = false;
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      if (e.key === "Escape") { setHelp(false); setMenu(false); return; }
      if (g) {
        g = false;
        const to = { h: "/ui/", t: "/ui/threads", s: "/ui/store" }[e.key];
        if (to) { e.preventDefault(); navigate(to); }
        return;
      }
      if (e.key === "g") g = true;
      else if (e.key === "?") setHelp((h) => !h);
      else if (e.key === "t") toggleTheme();
      else if (e.key === "/") {
        const s = document.querySelector<HTMLInputElement>("[data-search]");
        if (s) { e.preventDefault(); s.focus(); }
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [toggleTheme]);

  if (needAuth) return <SignIn onDone={() => void load()} />;

  const nav = (
    <nav aria-label="main" className="flex flex-col gap-4 text-sm">
      <div>
        <p className="muted mb-1 text-xs font-semibold uppercase tracking-wide">Studio</p>
        <ul className="flex flex-col gap-0.5">
          <li><NavLink to={ui("/")} path={path} exact>Home</NavLink></li>
          <li><NavLink to={ui("/threads")} path={path}>Threads</NavLink></li>
          <li><NavLink to={ui("/inbox")} path={path}>Inbox</NavLink></li>
          <li><NavLink to={ui("/assistants")} path={path} exact>Assistants</NavLink></li>
          <li><NavLink to={ui("/crons")} path={path}>Crons</NavLink></li>
          <li><NavLink to={ui("/store")} path={path}>Store</NavLink></li>
        </ul>
      </div>
      <div>
        <p className="muted mb-1 text-xs font-semibold uppercase tracking-wide">Apps</p>
        <ul className="flex flex-col gap-0.5">
          {catalog?.apps.map((a) => <li key={a.name}><NavLink to={ui("/apps/" + a.name)} path={path}>{a.name}</NavLink></li>)}
        </ul>
      </div>
      <div>
        <p className="muted mb-1 text-xs font-semibold uppercase tracking-wide">Assistants</p>
        <ul className="flex flex-col gap-0.5">
          {catalog?.assistants.map((a) => (
            <li key={a.assistant_id}><NavLink to={ui("/assistants/" + encodeURIComponent(a.assistant_id))} path={path}>{a.name}</NavLink></li>
          ))}
        </ul>
      </div>
    </nav>
  );

  return (
    <div className="min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:p-2 dark:focus:bg-zinc-900">Skip to content</a>
      <header className="sticky top-0 z-40 flex items-center gap-2 border-b border-zinc-200 bg-white/90 px-3 py-2 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/90">
        <button className="btn md:hidden" aria-label="menu" aria-expanded={menu} onClick={() => setMenu((x) => !x)}>☰</button>
        <Link to={ui("/")} className="font-semibold tracking-tight">trellis</Link>
        <span className="flex-1" />
        {currentAuth().kind !== "none" && (
          <button className="btn" onClick={() => { setAuth({ kind: "none" }, false); setCatalog(null); void load(); }}>Sign out</button>
        )}
        <button className="btn" aria-label="keyboard shortcuts" onClick={() => setHelp(true)}>?</button>
        <button className="btn" aria-label={dark ? "light theme" : "dark theme"} onClick={toggleTheme}>{dark ? "☀" : "☾"}</button>
      </header>
      <div className="flex">
        <aside className={(menu ? "block" : "hidden") + " fixed inset-x-0 top-12 z-30 max-h-[80vh] overflow-auto border-b border-zinc-200 bg-white p-4 md:static md:block md:w-56 md:shrink-0 md:border-b-0 md:border-r md:bg-transparent dark:border-zinc-800 dark:bg-zinc-950"}>
          {nav}
        </aside>
        <main id="main" className="min-w-0 flex-1 p-3 sm:p-6">
          <ErrorBox error={err} />
          <Outlet context={{ catalog, reload: load } satisfies Shell} />
        </main>
      </div>
      {help && (
        <div role="dialog" aria-modal="true" aria-label="keyboard shortcuts" className="fixed inset-0 z-50 flex items-center justify-center bg-black/40 p-4" onClick={() => setHelp(false)}>
          <div className="card w-full max-w-sm" onClick={(e) => e.stopPropagation()}>
            <h2 className="mb-2 font-semibold">Keyboard</h2>
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
              {shortcuts.map(([k, v]) => (<Fragment key={k}><dt><kbd className="code">{k}</kbd></dt><dd>{v}</dd></Fragment>))}
            </dl>
            <p className="muted mt-2 text-xs">Tab moves between controls; Enter sends a chat message, Shift+Enter starts a new line.</p>
            <button className="btn mt-3" autoFocus onClick={() => setHelp(false)}>Close</button>
          </div>
        </div>
      )}
    </div>
  );
}

function NavLink({ to, path, exact, children }: { to: string; path: string; exact?: boolean; children: React.ReactNode }) {
  const active = exact ? path === to || (to === "/ui/" && path === "/") : path === to || path.startsWith(to + "/");
  return (
    <Link to={to} aria-current={active ? "page" : undefined}
      className={"block truncate rounded px-2 py-1 " + (active ? "bg-emerald-50 font-medium text-emerald-800 dark:bg-emerald-950 dark:text-emerald-200" : "hover:bg-zinc-100 dark:hover:bg-zinc-900")}>
      {children}
    </Link>
  );
}

// Shell is what the shell gives its pages (React Router's outlet context).
type Shell = { catalog: Catalog | null; reload: () => Promise<void> };
const useShell = () => useOutletContext<Shell>();

function NotFound() {
  const { path } = useLocation();
  return <div className="card"><h1 className="text-lg font-semibold">Not found</h1><p className="muted">No page at {path}. <Link className="underline" to={ui("/")}>Home</Link></p></div>;
}

// The pages as routes. A page that needs the catalog reads it from the shell.
function HomeRoute() { return <Home catalog={useShell().catalog} />; }
function AppRoute() { return <AppLanding catalog={useShell().catalog} name={useParams().name ?? ""} />; }
function AnalystRoute() { return <AnalystInbox catalog={useShell().catalog} />; }
function StudioRoute() {
  const { aid = "", tab = "chat" } = useParams();
  const [q] = useSearchParams();
  return <Studio catalog={useShell().catalog} aid={aid} tab={tab} thread={q.get("thread")} />;
}
function InspectorRoute() { return <ThreadInspector tid={useParams().tid ?? ""} />; }
function RunRoute() { const { tid = "", rid = "" } = useParams(); return <RunPage tid={tid} rid={rid} />; }
function AssistantsRoute() { const s = useShell(); return <Assistants catalog={s.catalog} onChanged={() => void s.reload()} />; }
function CronsRoute() { return <Crons catalog={useShell().catalog} />; }
function RealtyRoute() { return <Suspense fallback={<p className="muted">Loading…</p>}><Realty /></Suspense>; }

export const routes: RouteObject[] = [{
  element: <App />,
  children: [
    { path: "/", element: <HomeRoute /> },
    { path: "/ui", element: <HomeRoute /> },
    { path: "/ui/apps/listforge", element: <Listforge /> },
    { path: "/ui/apps/listforge/items/:id", element: <Listforge /> },
    { path: "/ui/apps/rehab", element: <Rehab /> },
    { path: "/ui/apps/analyst", element: <AnalystRoute /> },
    { path: "/ui/apps/realty", element: <RealtyRoute /> },
    { path: "/ui/apps/:name", element: <AppRoute /> },
    { path: "/ui/assistants", element: <AssistantsRoute /> },
    { path: "/ui/assistants/:aid", element: <StudioRoute /> },
    { path: "/ui/assistants/:aid/:tab", element: <StudioRoute /> },
    { path: "/ui/threads", element: <Threads /> },
    { path: "/ui/threads/:tid", element: <InspectorRoute /> },
    { path: "/ui/threads/:tid/runs/:rid", element: <RunRoute /> },
    { path: "/ui/store", element: <Store /> },
    { path: "/ui/crons", element: <CronsRoute /> },
    { path: "/ui/inbox", element: <Inbox /> },
    { path: "*", element: <NotFound /> },
  ],
}];
