package entity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Cutoff is the specification's fuzzy-match threshold.
const Cutoff = 0.7

// Kinds of entity the resolver knows.
const (
	Vendor        = "vendor"
	Market        = "market"
	HubZone       = "hub_zone"
	Technology    = "technology"
	ProjectStatus = "project_status"
)

// Known are the canonical values of each kind, from the specification's
// catalogue, plus the hub-zones of the generated markets.
var Known = map[string][]string{
	Vendor: {"Ascend", "Hitachi"},
	Market: {"CAISO", "ERCOT", "MISO", "PJM", "NYISO", "ISO-NE", "SPP"},
	HubZone: {"NP15", "SP15", "ZP26", "HB_NORTH", "HB_HOUSTON", "HB_WEST", "HB_BUSAVG", "LZ_NORTH", "LZ_HOUSTON",
		"LZ_AEN", "LZ_CPS", "LZ_RAYBN", "LZ_WEST", "INDIANA_HUB", "PJM_WEST", "ZONE_J", "MASS_HUB"},
	Technology:    {"Solar", "Wind", "BESS", "Hybrid", "Solar+Storage"},
	ProjectStatus: {"on_track", "at_risk", "off_track", "on_hold"},
}

// HubMarket is the market of each hub-zone of Known.
var HubMarket = map[string]string{"NP15": "CAISO", "SP15": "CAISO", "ZP26": "CAISO",
	"HB_NORTH": "ERCOT", "HB_HOUSTON": "ERCOT", "HB_WEST": "ERCOT", "HB_BUSAVG": "ERCOT", "LZ_NORTH": "ERCOT",
	"LZ_HOUSTON": "ERCOT", "LZ_AEN": "ERCOT", "LZ_CPS": "ERCOT", "LZ_RAYBN": "ERCOT", "LZ_WEST": "ERCOT",
	"INDIANA_HUB": "MISO", "PJM_WEST": "PJM", "ZONE_J": "NYISO", "MASS_HUB": "ISO-NE"}

// HubIn returns the hub-zone of market that an alias word names when the alias belongs to
// another market's hub ("north" is CAISO's NP15, but ERCOT's HB_NORTH): the first hub-zone of
// the market, in Known's order, whose name holds the word. ok is false when none does.
func HubIn(market, word string) (string, bool) {
	w := strings.ToUpper(strings.Join(strings.Fields(word), "_"))
	for _, h := range Known[HubZone] {
		if HubMarket[h] == market && strings.Contains(h, w) {
			return h, true
		}
	}
	return "", false
}

// MainHub is each market's main hub-zone, by which two markets are
// compared.
var MainHub = map[string]string{"CAISO": "NP15", "ERCOT": "HB_NORTH", "MISO": "INDIANA_HUB", "PJM": "PJM_WEST",
	"NYISO": "ZONE_J", "ISO-NE": "MASS_HUB", "SPP": ""}

// Aliases map lower-case words users write to canonical values, per kind.
// The specification keeps one flat map; here each alias belongs to a kind,
// so "north" is a hub-zone and never a market.
var Aliases = map[string]map[string]string{
	Vendor: {"hitachi icf": "Hitachi", "hitachi-icf": "Hitachi", "icf": "Hitachi", "hitachi": "Hitachi", "ascend": "Ascend"},
	Market: {"california": "CAISO", "texas": "ERCOT", "midwest": "MISO", "mid-atlantic": "PJM", "new york": "NYISO",
		"new england": "ISO-NE", "isone": "ISO-NE", "iso ne": "ISO-NE"},
	HubZone: {"north": "NP15", "south": "SP15", "north hub": "HB_NORTH", "houston hub": "HB_HOUSTON", "west hub": "HB_WEST",
		"hb north": "HB_NORTH", "np 15": "NP15", "sp 15": "SP15", "zp 26": "ZP26"},
	Technology: {"battery": "BESS", "storage": "BESS", "solar + storage": "Solar+Storage", "solar plus storage": "Solar+Storage", "pv": "Solar"},
	ProjectStatus: {"green": "on_track", "yellow": "at_risk", "red": "off_track", "blue": "on_hold", "on hold": "on_hold",
		"at risk": "at_risk", "off track": "off_track", "on track": "on_track"},
}

// ErrUnknownKind is returned for a kind the resolver does not know.
var ErrUnknownKind = errors.New("entity: unknown entity kind")

// Resolve normalises one value of a kind: the alias map first, then an
// exact match ignoring case, then the closest known value at or above
// Cutoff. A value nothing matches is returned as given, with ok false, so
// the query can still run and say it found nothing.
func Resolve(kind, value string) (canonical string, ok bool, err error) {
	known, found := Known[kind]
	if !found {
		return "", false, fmt.Errorf("%w %q; use one of vendor, market, hub_zone, technology, project_status", ErrUnknownKind, kind)
	}
	v := strings.TrimSpace(value)
	if v == "" {
		return "", false, nil
	}
	low := strings.ToLower(v)
	if c, ok := Aliases[kind][low]; ok {
		return c, true, nil
	}
	lows := make([]string, len(known))
	for i, k := range known {
		lows[i] = strings.ToLower(k)
		if lows[i] == low {
			return k, true, nil
		}
	}
	if m := CloseMatches(low, lows, 1, Cutoff); len(m) == 1 {
		for i, l := range lows {
			if l == m[0] {
				return known[i], true, nil
			}
		}
	}
	return v, false, nil
}

// Cache keeps resolved project names. Implementations are safe for
// concurrent use.
type Cache interface {
	// Get returns the cached value and whether there was one.
	Get(ctx context.Context, key string) (string, bool, error)
	// Set stores a value for ttl.
	Set(ctx context.Context, key, value string, ttl time.Duration) error
}

// PeakWindow is a market's on-peak hours, as hour-ending numbers (HE 1 is
// the hour from midnight to 1 am), both ends included. Every other hour is
// off-peak.
type PeakWindow struct {
	FirstHE, LastHE int
}

// Contains reports whether hour of day h (0-23, the hour beginning at h)
// is on-peak.
func (p PeakWindow) Contains(h int) bool { return h+1 >= p.FirstHE && h+1 <= p.LastHE }

// PeakHours are the markets' on-peak hours as each ISO defines them: the
// western and Texas markets HE 7-22, the eastern ones HE 8-23 (7 am to 11
// pm prevailing Eastern time).
var PeakHours = map[string]PeakWindow{
	"CAISO": {7, 22}, "ERCOT": {7, 22}, "SPP": {7, 22},
	"MISO": {8, 23}, "PJM": {8, 23}, "NYISO": {8, 23}, "ISO-NE": {8, 23},
}

// DefaultPeak is the on-peak window of a market PeakHours does not name:
// the specification's hours 7-22 (hour beginning), HE 8-23.
var DefaultPeak = PeakWindow{8, 23}

// PeakOf returns a market's on-peak hours and whether the market defines
// them (false: DefaultPeak).
func PeakOf(market string) (PeakWindow, bool) {
	p, ok := PeakHours[market]
	if !ok {
		return DefaultPeak, false
	}
	return p, true
}
