// ListForge's pages: /ui/apps/listforge (the items, with a form to create one) and
// /ui/apps/listforge/items/<id>?tab=details|research|chat (an item with its Details, Research
// and Chat tabs).
import { match } from "../../../router";
import { ItemList } from "./ItemList";
import { ItemPage } from "./ItemPage";

export function Listforge({ path, query }: { path: string; query: URLSearchParams }) {
  const m = match("/ui/apps/listforge/items/:id", path);
  if (m) return <ItemPage key={m.id} id={m.id} tab={query.get("tab") ?? "details"} />;
  return <ItemList page={Math.max(1, Number(query.get("page")) || 1)} />;
}
