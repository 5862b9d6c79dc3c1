// demo-regions.mjs writes src/assets/demo-regions.json, the part of the offline base map that
// draws the demo regions: Natural Earth's urban areas (city outlines, 1:50m) and populated places
// (the places' names and ranks, 1:10m) around each city the apps' demo data has listings in,
// nothing else of the world. Natural Earth is public domain (naturalearthdata.com); the GeoJSON
// read here is its shapefiles as converted by ogr2ogr (the "natural-earth-geojson" collection,
// CC0). Run from ui/ when the regions or the data change:
//
//   node scripts/demo-regions.mjs <ne_50m_urban_areas.json> <ne_10m_populated_places.json>
//
// The output is deterministic (features in input order, coordinates rounded to 4 decimals, about
// 10 m, far below the data's own accuracy at 1:50m).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The demo regions: a box of ±1° of latitude and ±1.3° of longitude (about 110 km by 120 km)
// around each city the apps' offline data places listings in.
const REGIONS = [
  // apps/realty/realtyapi/offline.go: Cities
  { name: "Austin", lat: 30.2672, lng: -97.7431 },
  { name: "Denver", lat: 39.7392, lng: -104.9903 },
  { name: "Seattle", lat: 47.6062, lng: -122.3321 },
  { name: "Miami", lat: 25.7617, lng: -80.1918 },
  // apps/rehab/listing/demo.go: the demo listings' neighbourhoods (Lisboa, Porto)
  { name: "Lisboa", lat: 38.7223, lng: -9.1393 },
  { name: "Porto", lat: 41.1579, lng: -8.6291 },
];
const DLAT = 1.0;
const DLNG = 1.3;
// Places below this Natural Earth scale rank are left out (0 = world cities … 10 = small towns):
// the towns of a metropolitan area, not every village.
const MAX_PLACE_RANK = 8;

const [urbanPath, placesPath] = process.argv.slice(2);
if (!urbanPath || !placesPath) {
  console.error("usage: node scripts/demo-regions.mjs <ne_50m_urban_areas.json> <ne_10m_populated_places.json>");
  process.exit(2);
}
const read = (p) => {
  const g = JSON.parse(readFileSync(p, "utf8"));
  if (g.type !== "FeatureCollection" || !Array.isArray(g.features)) throw new Error(p + ": not a GeoJSON FeatureCollection");
  return g;
};

const boxes = REGIONS.map((r) => ({ name: r.name, w: r.lng - DLNG, e: r.lng + DLNG, s: r.lat - DLAT, n: r.lat + DLAT }));
const inBox = (b, [x, y]) => x >= b.w && x <= b.e && y >= b.s && y <= b.n;
const round = (v) => Math.round(v * 1e4) / 1e4;
const roundCoords = (c) => (typeof c[0] === "number" ? [round(c[0]), round(c[1])] : c.map(roundCoords));
const points = (c) => (typeof c[0] === "number" ? [c] : c.flatMap(points));

const features = [];
const count = Object.fromEntries(REGIONS.map((r) => [r.name, { urban: 0, places: 0 }]));

// Urban areas: a whole polygon when any of its points is in a region's box (outlines stay closed;
// an urban area is far smaller than a box).
for (const f of read(urbanPath).features) {
  if (!f.geometry) continue;
  const pts = points(f.geometry.coordinates);
  const b = boxes.find((b) => pts.some((p) => inBox(b, p)));
  if (!b) continue;
  count[b.name].urban++;
  features.push({ type: "Feature", properties: { kind: "urban", region: b.name }, geometry: { type: f.geometry.type, coordinates: roundCoords(f.geometry.coordinates) } });
}

// Populated places: the point, its name and scale rank (the map shows the larger ones first).
for (const f of read(placesPath).features) {
  const p = f.properties ?? {};
  const rank = Number(p.scalerank ?? p.SCALERANK);
  const name = p.name ?? p.NAME;
  if (!f.geometry || f.geometry.type !== "Point" || !name || !(rank <= MAX_PLACE_RANK)) continue;
  const b = boxes.find((b) => inBox(b, f.geometry.coordinates));
  if (!b) continue;
  count[b.name].places++;
  features.push({ type: "Feature", properties: { kind: "place", region: b.name, name, rank }, geometry: { type: "Point", coordinates: roundCoords(f.geometry.coordinates) } });
}

for (const [name, c] of Object.entries(count)) {
  if (c.urban === 0) throw new Error(`no urban area found around ${name}: is ${urbanPath} Natural Earth's urban areas?`);
}
const out = {
  type: "FeatureCollection",
  // A foreign member (RFC 7946 §6.1): where the data comes from.
  source: "Natural Earth (public domain): ne_50m_urban_areas, ne_10m_populated_places; clipped by ui/scripts/demo-regions.mjs",
  regions: boxes,
  features,
};
const target = fileURLToPath(new URL("../src/assets/demo-regions.json", import.meta.url));
writeFileSync(target, JSON.stringify(out) + "\n");
console.log(target, JSON.stringify(out).length + 1, "bytes", JSON.stringify(count));
