// Map draws places on a Leaflet map (react-leaflet): a marker with a popup for each, the view
// fitted to them. Tiles come from the server's setting (GET /ui/config.json, `trellis serve
// --map-tiles`); with none the markers stand on a plain background and the map asks nothing of
// any other host. Leaflet's CSS and marker images are bundled: its default icon finds its
// images through a path guessed from the CSS, which a bundler's hashed file names break, so
// every marker gets an icon built from the bundled URLs.
//
// Under the tiles, and alone when there are none, an offline base layer shipped with the UI:
// Natural Earth's land and country borders at 1:50m (world-atlas's TopoJSON, public domain) and
// the United States' state and county lines at 1:10m (us-atlas, from the Census Bureau's
// cartographic boundaries, public domain), files of /ui/assets/ read from the server's own
// origin, so markers stand on a map, not an empty background. Around the cities of the apps' demo
// data (realty's Austin, Denver, Seattle and Miami, rehab's Lisboa and Porto) it also draws the
// city outlines (Natural Earth's urban areas, 1:50m) and the names of the places there (its
// populated places, 1:10m), clipped by scripts/demo-regions.mjs into one small file. It lives in
// panes below Leaflet's tile pane, so configured tiles cover it, names included.
import { useEffect, useMemo, useState, type ReactNode } from "react";
import L from "leaflet";
import { AttributionControl, CircleMarker, GeoJSON, MapContainer, Marker, Pane, Popup, TileLayer, Tooltip, useMap, useMapEvents } from "react-leaflet";
import { feature, mesh } from "topojson-client";
import type { Topology, GeometryCollection } from "topojson-specification";
import type { FeatureCollection, Feature, Geometry, MultiLineString, Point, Polygon, MultiPolygon } from "geojson";
import countriesUrl from "world-atlas/countries-50m.json?url";
import usCountiesUrl from "us-atlas/counties-10m.json?url";
import demoRegionsUrl from "../assets/demo-regions.json?url";
import "leaflet/dist/leaflet.css";
import "./map.css";
import iconUrl from "leaflet/dist/images/marker-icon.png";
import iconRetinaUrl from "leaflet/dist/images/marker-icon-2x.png";
import shadowUrl from "leaflet/dist/images/marker-shadow.png";

export const markerIcon = L.icon({
  iconUrl, iconRetinaUrl, shadowUrl,
  iconSize: [25, 41], iconAnchor: [12, 41], popupAnchor: [1, -34], tooltipAnchor: [16, -28], shadowSize: [41, 41],
});
// Markers made elsewhere without an icon get the bundled one too.
L.Marker.prototype.options.icon = markerIcon;

export type UIConfig = { map_tiles: string; map_attribution: string };

let config: Promise<UIConfig> | null = null;

// uiConfig reads the server's settings for the pages once; a server without them means no tiles.
export function uiConfig(): Promise<UIConfig> {
  config ??= fetch("/ui/config.json", { headers: { accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : null))
    .catch(() => null)
    .then((c) => ({ map_tiles: c?.map_tiles ?? "", map_attribution: c?.map_attribution ?? "" }));
  return config;
}

// A place of the demo regions: its name and Natural Earth's scale rank (0 for a world city, up to
// 8 for a town).
export type Place = { name: string; rank: number; lat: number; lng: number };

export type BaseMap = {
  land: FeatureCollection | Feature; borders: MultiLineString; states?: MultiLineString; counties?: MultiLineString;
  urban?: FeatureCollection<Polygon | MultiPolygon>; places?: Place[];
};

type DemoRegions = FeatureCollection<Polygon | MultiPolygon | Point, { kind: string; name?: string; rank?: number }>;

let base: Promise<BaseMap | null> | null = null;

const topology = (url: string): Promise<Topology> => fetch(url).then((r) => (r.ok ? r.json() : Promise.reject(new Error(url + ": " + r.statusText))));

const demoRegions = (): Promise<DemoRegions | null> =>
  fetch(demoRegionsUrl).then((r) => (r.ok ? r.json() : null)).catch(() => null);

// baseMap reads the bundled files once: the countries' shapes as land, the lines between two
// countries as borders (coastlines are the land's edge), in the United States the lines between
// states and between counties, and around the demo cities their outlines and place names. Only
// the countries file is needed: without the others the map has less on it.
export function baseMap(): Promise<BaseMap | null> {
  base ??= Promise.all([topology(countriesUrl), topology(usCountiesUrl).catch(() => null), demoRegions()])
    .then(([t, us, demo]) => {
      const countries = t.objects.countries as GeometryCollection;
      const out: BaseMap = {
        land: feature(t, countries) as FeatureCollection<Geometry>,
        borders: mesh(t, countries, (a, b) => a !== b),
      };
      if (us) {
        out.states = mesh(us, us.objects.states as GeometryCollection, (a, b) => a !== b);
        out.counties = mesh(us, us.objects.counties as GeometryCollection, (a, b) => a !== b && a.id!.toString().slice(0, 2) === b.id!.toString().slice(0, 2));
      }
      if (demo?.type === "FeatureCollection") {
        out.urban = { type: "FeatureCollection", features: demo.features.filter((f): f is Feature<Polygon | MultiPolygon, { kind: string }> => f.properties?.kind === "urban" && f.geometry?.type !== "Point") };
        out.places = demo.features.flatMap((f) => f.properties?.kind === "place" && f.geometry?.type === "Point" && f.properties.name
          ? [{ name: f.properties.name, rank: f.properties.rank ?? 10, lng: f.geometry.coordinates[0], lat: f.geometry.coordinates[1] }] : []);
      }
      return out;
    })
    .catch(() => null);
  return base;
}

// maxPlaceRank is the largest scale rank of the places named at a zoom: the world cities when the
// view spans a country, the towns of a metropolitan area when it spans a city.
export function maxPlaceRank(zoom: number): number {
  if (zoom < 6) return -1;
  if (zoom < 8) return 3;
  if (zoom < 10) return 6;
  return 8;
}

// PlaceNames writes the demo regions' place names, quietly, as many as the zoom calls for. They
// are tooltips (not markers, so that they never count as the page's markers) in their own pane
// above the base layer and below the tile pane.
function PlaceNames({ places }: { places: Place[] }) {
  const map = useMap();
  const [zoom, setZoom] = useState(() => map.getZoom());
  useMapEvents({ zoomend: () => setZoom(map.getZoom()) });
  const shown = useMemo(() => places.filter((p) => p.rank <= maxPlaceRank(zoom)), [places, zoom]);
  return (
    <Pane name="trellis-base-names" style={{ zIndex: 160 }}>
      {shown.map((p) => (
        <CircleMarker key={p.name + p.lat + p.lng} center={[p.lat, p.lng]} radius={p.rank <= 3 ? 2.5 : 1.8} interactive={false} pane="trellis-base"
          pathOptions={{ className: "trellis-place", weight: 0, fillOpacity: 1 }}>
          <Tooltip permanent direction="right" offset={[3, 0]} pane="trellis-base-names" interactive={false}
            className={"trellis-place-name" + (p.rank <= 3 ? " trellis-place-major" : "")}>{p.name}</Tooltip>
        </CircleMarker>
      ))}
    </Pane>
  );
}

function BaseLayer() {
  const [b, setB] = useState<BaseMap | null>(null);
  useEffect(() => { void baseMap().then(setB); }, []);
  if (!b) return null;
  return (
    <>
      <Pane name="trellis-base" style={{ zIndex: 150 }}>
        <GeoJSON data={b.land} interactive={false} style={{ className: "trellis-land", stroke: false, fillOpacity: 1 }} />
        {b.urban && <GeoJSON data={b.urban} interactive={false} style={{ className: "trellis-urban", weight: 0.8, opacity: 1, fillOpacity: 1 }} />}
        {b.counties && <GeoJSON data={b.counties} interactive={false} style={{ className: "trellis-county", weight: 0.6, opacity: 1, fill: false }} />}
        {b.states && <GeoJSON data={b.states} interactive={false} style={{ className: "trellis-state", weight: 1, opacity: 1, fill: false }} />}
        <GeoJSON data={b.borders} interactive={false} style={{ className: "trellis-border", weight: 1.2, opacity: 1, fill: false }} />
      </Pane>
      {b.places && b.places.length > 0 && <PlaceNames places={b.places} />}
    </>
  );
}

export type MapPoint = { id: string; lat: number; lng: number; label: string; popup?: ReactNode };

function Fit({ points }: { points: MapPoint[] }) {
  const map = useMap();
  const key = points.map((p) => p.id + ":" + p.lat + "," + p.lng).join("|");
  useEffect(() => {
    if (points.length === 0) return;
    if (points.length === 1) map.setView([points[0].lat, points[0].lng], 14, { animate: false });
    else map.fitBounds(L.latLngBounds(points.map((p) => [p.lat, p.lng] as [number, number])), { padding: [32, 32], maxZoom: 15, animate: false });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [map, key]);
  return null;
}

// MapView shows the points; it renders nothing until the settings are read, and a note instead
// of a map when there is no point. It moves without animations: a map removed while one runs
// (the page left, the list re-rendered) made Leaflet throw on its next frame ("reading
// '_leaflet_pos'").
export function MapView({ points, label, className, empty }: { points: MapPoint[]; label: string; className?: string; empty?: ReactNode }) {
  const [cfg, setCfg] = useState<UIConfig | null>(null);
  useEffect(() => { void uiConfig().then(setCfg); }, []);
  if (points.length === 0) return <div className="muted rounded-md border border-dashed border-zinc-300 p-4 text-center text-sm dark:border-zinc-700">{empty ?? "Nothing to show on the map."}</div>;
  if (!cfg) return <div className={"muted rounded-md p-4 text-sm " + (className ?? "")}>Loading the map…</div>;
  return (
    <div role="region" aria-label={label} className={"relative z-0 overflow-hidden rounded-md border border-zinc-200 dark:border-zinc-800 " + (className ?? "")} data-markers={points.length} data-tiles={cfg.map_tiles ? "on" : "off"}>
      <MapContainer className="trellis-map h-full w-full" center={[points[0].lat, points[0].lng]} zoom={12} scrollWheelZoom={false} attributionControl={false}
        zoomAnimation={false} fadeAnimation={false} markerZoomAnimation={false}>
        <BaseLayer />
        {cfg.map_tiles && (
          <TileLayer url={cfg.map_tiles} attribution={cfg.map_attribution} maxZoom={19}
            detectRetina={false} referrerPolicy="strict-origin-when-cross-origin" />
        )}
        <AttributionControl prefix={cfg.map_tiles ? "Leaflet" : "Leaflet · Natural Earth, US Census (offline base map)"} />
        {points.map((p) => (
          <Marker key={p.id} position={[p.lat, p.lng]} icon={markerIcon} title={p.label} alt={p.label}>
            {p.popup && <Popup>{p.popup}</Popup>}
          </Marker>
        ))}
        <Fit points={points} />
      </MapContainer>
    </div>
  );
}
