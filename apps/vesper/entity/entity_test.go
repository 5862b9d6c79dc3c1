package entity_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
)

func TestMain(m *testing.M) { warehousetest.Main(m) }

func TestRatioMatchesDifflib(t *testing.T) {
	// values computed with Python's difflib.SequenceMatcher(None, a, b).ratio()
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"abcd", "bcde", 0.75},
		{"appel", "apple", 0.8},
		{"hitachy", "hitachi", 12.0 / 14},
		{"", "", 1},
		{"abc", "", 0},
		{"nazareth slar", "nazareth solar", 26.0 / 27},
	} {
		if got := entity.Ratio(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Ratio(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	got := entity.CloseMatches("appel", []string{"ape", "apple", "peach", "puppy"}, 3, 0.6)
	if !slices.Equal(got, []string{"apple", "ape"}) {
		t.Errorf("CloseMatches = %v", got)
	}
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		kind, in, want string
		ok             bool
	}{
		{entity.Vendor, "hitachi icf", "Hitachi", true},
		{entity.Vendor, "ICF", "Hitachi", true},
		{entity.Vendor, "Hitachy", "Hitachi", true},
		{entity.Vendor, "  ascend ", "Ascend", true},
		{entity.Market, "texas", "ERCOT", true},
		{entity.Market, "erct", "ERCOT", true},
		{entity.Market, "caiso", "CAISO", true},
		{entity.HubZone, "north hub", "HB_NORTH", true},
		{entity.HubZone, "north", "NP15", true},
		{entity.HubZone, "np-15", "NP15", true},
		{entity.HubZone, "hb_houston", "HB_HOUSTON", true},
		{entity.Technology, "battery", "BESS", true},
		{entity.ProjectStatus, "red", "off_track", true},
		{entity.ProjectStatus, "At Risk", "at_risk", true},
		{entity.Vendor, "Genscape", "Genscape", false},
		{entity.Market, "", "", false},
	} {
		got, ok, err := entity.Resolve(tc.kind, tc.in)
		if err != nil || got != tc.want || ok != tc.ok {
			t.Errorf("Resolve(%s, %q) = %q, %v, %v; want %q, %v", tc.kind, tc.in, got, ok, err, tc.want, tc.ok)
		}
	}
	if _, _, err := entity.Resolve("planet", "Mars"); err == nil {
		t.Error("unknown kind: want an error")
	}
}

type countingQuerier struct {
	entity.Querier
	n int
}

func (c *countingQuerier) Query(ctx context.Context, tenant, sql string, args ...any) (*warehouse.Result, error) {
	c.n++
	return c.Querier.Query(ctx, tenant, sql, args...)
}

func TestProjectResolver(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) *warehouse.Warehouse
	}{
		{"sqlite", func(t *testing.T) *warehouse.Warehouse { return warehousetest.SQLite(t) }},
		{"postgres", func(t *testing.T) *warehouse.Warehouse { return warehousetest.Postgres(t, warehouse.Config{}) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			w := b.open(t)
			ctx := context.Background()
			now := time.Date(2026, 2, 27, 9, 0, 0, 0, time.UTC)
			q := &countingQuerier{Querier: w}
			r := entity.NewProjectResolver(q, entity.NewMemoryCache(func() time.Time { return now }))

			m, err := r.Resolve(ctx, "vesper", "nazareth")
			if err != nil || m.Name != "Nazareth Solar" || m.ProjectID != "PRJ-0001" || m.FromCache {
				t.Fatalf("nazareth: %+v %v", m, err)
			}
			m, _ = r.Resolve(ctx, "vesper", "Nazareth")
			if !m.FromCache || m.Name != "Nazareth Solar" || q.n != 1 {
				t.Errorf("second lookup should come from the cache: %+v, %d queries", m, q.n)
			}
			now = now.Add(entity.ProjectTTL)
			if m, _ = r.Resolve(ctx, "vesper", "nazareth"); m.FromCache || q.n != 2 {
				t.Errorf("after five minutes the cache entry should have expired: %+v", m)
			}
			// tenants are resolved apart
			m, _ = r.Resolve(ctx, "northwind", "nazareth")
			if m.Name != "Nazareth Ridge Solar" {
				t.Errorf("northwind nazareth = %+v", m)
			}
			// ambiguous: the list of matches, shortest first
			m, _ = r.Resolve(ctx, "vesper", "sierra")
			if !m.Ambiguous() || !slices.Equal(m.Matches, []string{"Sierra Wind", "Sierra Solar"}) {
				t.Errorf("sierra = %+v", m)
			}
			if msg := m.Message("sierra"); msg != `"sierra" matches 2 projects: Sierra Wind, Sierra Solar. Which one do you mean?` {
				t.Errorf("message = %q", msg)
			}
			// exact name wins over longer names that contain it
			m, _ = r.Resolve(ctx, "vesper", "mojave solar")
			if m.Name != "Mojave Solar" {
				t.Errorf("mojave solar = %+v", m)
			}
			// typo: not found, with a suggestion at the cutoff
			m, _ = r.Resolve(ctx, "vesper", "Nazareth Slar")
			if !m.NotFound || !slices.Equal(m.Suggestions, []string{"Nazareth Solar"}) {
				t.Errorf("typo = %+v", m)
			}
			// LIKE wildcards in the name are literal
			m, _ = r.Resolve(ctx, "vesper", "%")
			if !m.NotFound {
				t.Errorf("%% should match nothing literally: %+v", m)
			}
			// archived projects are not offered
			m, _ = r.Resolve(ctx, "vesper", "Owens Lake")
			if !m.NotFound {
				t.Errorf("archived project resolved: %+v", m)
			}
			if _, err := r.Resolve(ctx, "vesper", "  "); err == nil {
				t.Error("empty name: want an error")
			}
		})
	}
}

func TestRedisCache(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Skipf("redis unreachable at 127.0.0.1:6379: %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	prefix := "vesper-test-" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		keys, _ := c.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	rc := entity.NewRedisCache(c, prefix)
	if _, ok, err := rc.Get(ctx, "k"); ok || err != nil {
		t.Fatalf("empty get: %v %v", ok, err)
	}
	if err := rc.Set(ctx, "k", "Nazareth Solar", entity.ProjectTTL); err != nil {
		t.Fatal(err)
	}
	v, ok, err := rc.Get(ctx, "k")
	if !ok || err != nil || v != "Nazareth Solar" {
		t.Fatalf("get = %q %v %v", v, ok, err)
	}
	if ttl := c.TTL(ctx, prefix+"k").Val(); ttl <= 4*time.Minute || ttl > 5*time.Minute {
		t.Errorf("ttl = %v, want five minutes", ttl)
	}
	// the resolver works through it
	r := entity.NewProjectResolver(warehousetest.SQLite(t), rc)
	if m, _ := r.Resolve(ctx, "vesper", "kern"); m.Name != "Kern Wind" {
		t.Fatalf("kern = %+v", m)
	}
	if m, _ := r.Resolve(ctx, "vesper", "KERN"); !m.FromCache {
		t.Errorf("second lookup not from redis: %+v", m)
	}
}

func TestHubIn(t *testing.T) {
	for _, c := range []struct {
		market, word, want string
		ok                 bool
	}{
		{"ERCOT", "north", "HB_NORTH", true},
		{"ERCOT", "houston", "HB_HOUSTON", true},
		{"CAISO", "north hub", "", false},
		{"PJM", "south", "", false},
	} {
		got, ok := entity.HubIn(c.market, c.word)
		if got != c.want || ok != c.ok {
			t.Errorf("HubIn(%q, %q) = %q, %v; want %q, %v", c.market, c.word, got, ok, c.want, c.ok)
		}
	}
	for _, h := range entity.Known[entity.HubZone] {
		if entity.HubMarket[h] == "" {
			t.Errorf("hub-zone %s has no market in HubMarket", h)
		}
	}
}
