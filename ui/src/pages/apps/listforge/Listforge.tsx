// ListForge's pages: /ui/apps/listforge (the items, with a form to create one) and
// /ui/apps/listforge/items/<id>?tab=details|research|chat (an item with its Details, Research
// and Chat tabs). App.tsx routes both here; the item's ID is the route's :id.
import { useParams, useSearchParams } from "react-router";
import { ItemList } from "./ItemList";
import { ItemPage } from "./ItemPage";

export function Listforge() {
  const { id } = useParams();
  const [query] = useSearchParams();
  if (id) return <ItemPage key={id} id={id} tab={query.get("tab") ?? "details"} />;
  return <ItemList page={Math.max(1, Number(query.get("page")) || 1)} />;
}
