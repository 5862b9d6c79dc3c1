// Routing is React Router's (a data router over the History API, made in main.tsx from App's
// routes): the UI's pages live under /ui/, and the server answers index.html for any of them.
// This module keeps the few helpers the pages use: navigate (also from outside a component),
// useLocation as a path and its query, Link, and ui() for a page's address.
import { Link as RouterLink, useLocation as setRouterLocation, type LinkProps } from "react-router";

type Navigator = { navigate: (to: string, opts?: { replace?: boolean }) => unknown };
let current: Navigator | null = null;

// setRouter makes navigate go through r (main.tsx passes the app's router).
export function setRouter(r: Navigator) {
  current = r;
}

export function navigate(to: string, replace = false) {
  if (to === location.pathname + location.search) return;
  if (current) void current.navigate(to, { replace });
  else if (replace) location.replace(to);
  else location.assign(to);
}

export function useLocation(): { path: string; query: URLSearchParams } {
  const l = setRouterLocation();
  return { path: l.pathname, query: new URLSearchParams(l.search) };
}

export function Link({ to, ...rest }: { to: string } & Omit<LinkProps, "to">) {
  return <RouterLink to={to} {...rest} />;
}

export const ui = (p: string) => "/ui" + p;
