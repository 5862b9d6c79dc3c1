package server

import (
	"context"
	"slices"
	"testing"
)

func TestThreadSearchSQLite(t *testing.T) { threadSearchTest(t, setup(t)) }

func TestThreadSearchPostgres(t *testing.T) {
	t.Parallel()
	threadSearchTest(t, setup(t, setupOpts{cfg: Config{DatabaseURL: pgURL(t)}}))
}

// threadSearchTest checks that /threads/search and /threads/count find by metadata (every JSON
// type, and keys that need quoting), values, status and IDs, sort by each key both ways, and
// page, all in the database's query and the final check together.
func threadSearchTest(t *testing.T, b *bundle) {
	var ids []string
	for i := range 12 {
		md := map[string]any{
			"owner":    []string{"ann", "bob", "cy"}[i%3],
			"n":        float64(i % 4),
			"even":     i%2 == 0,
			"nested":   map[string]any{"k": i % 2},
			"tags":     []any{"t", float64(i % 3)},
			`we"ird`:   "q",
			"maybe":    nil,
			"graph_id": "flow",
		}
		if i == 11 {
			md["owner"] = float64(1) // the same key with another type
			delete(md, "maybe")
		}
		ids = append(ids, b.newThread(md))
	}
	// Values: the flow graph's state, set on two threads.
	for _, i := range []int{2, 5} {
		b.mustDo("POST", "/threads/"+ids[i]+"/state", map[string]any{"values": map[string]any{"topic": "solar"}, "as_node": "plan"}, nil, 200)
	}
	search := func(q map[string]any) []string {
		t.Helper()
		var got []Thread
		b.mustDo("POST", "/threads/search", q, &got, 200)
		var out []string
		for _, th := range got {
			out = append(out, th.ThreadID)
		}
		var n int
		b.mustDo("POST", "/threads/count", q, &n, 200)
		if _, paged := q["limit"]; !paged && n != len(out) && len(out) < 10 {
			t.Errorf("%v: count %d, search found %d", q, n, len(out))
		}
		return out
	}
	pick := func(is ...int) []string {
		var out []string
		for _, i := range is {
			out = append(out, ids[i])
		}
		return out
	}
	// Newest first by default.
	newest := func(is ...int) []string {
		out := pick(is...)
		slices.Reverse(out)
		return out
	}
	for _, c := range []struct {
		q    map[string]any
		want []string
	}{
		{map[string]any{"metadata": map[string]any{"owner": "bob"}}, newest(1, 4, 7, 10)},
		{map[string]any{"metadata": map[string]any{"owner": float64(1)}}, newest(11)},
		{map[string]any{"metadata": map[string]any{"n": float64(2), "even": true}}, newest(2, 6, 10)},
		{map[string]any{"metadata": map[string]any{"even": false, "owner": "ann"}}, newest(3, 9)},
		// Creating a thread drops metadata keys whose value is null.
		{map[string]any{"metadata": map[string]any{"maybe": nil, "owner": "cy"}}, nil},
		{map[string]any{"metadata": map[string]any{"nested": map[string]any{"k": float64(1)}, "owner": "ann"}}, newest(3, 9)},
		{map[string]any{"metadata": map[string]any{"tags": []any{"t", float64(0)}}}, newest(0, 3, 6, 9)},
		{map[string]any{"metadata": map[string]any{`we"ird`: "q", "n": float64(3)}}, newest(3, 7, 11)},
		{map[string]any{"metadata": map[string]any{"owner": "nobody"}}, nil},
		{map[string]any{"metadata": map[string]any{"absent": "x"}}, nil},
		{map[string]any{"values": map[string]any{"topic": "solar"}}, newest(2, 5)},
		{map[string]any{"values": map[string]any{"topic": "solar"}, "metadata": map[string]any{"owner": "cy"}}, newest(2, 5)},
		{map[string]any{"ids": pick(0, 5, 9), "metadata": map[string]any{"even": true}}, newest(0)},
		{map[string]any{"status": "busy"}, nil},
		{map[string]any{"metadata": map[string]any{"owner": "bob"}, "sort_order": "asc"}, pick(1, 4, 7, 10)},
		{map[string]any{"metadata": map[string]any{"owner": "ann"}, "limit": 2, "offset": 1}, newest(3, 6)},
		{map[string]any{"metadata": map[string]any{"owner": "ann"}, "limit": 2, "offset": 4}, nil},
	} {
		if got := search(c.q); !slices.Equal(got, c.want) {
			t.Errorf("%v: found %q, want %q", c.q, got, c.want)
		}
	}
	// The database's query does the narrowing: the final check sees only matching threads
	// when the wanted values are scalars.
	rows := 0
	f := threadFilter{metadata: map[string]any{"owner": "bob", "n": float64(1), "even": false, `we"ird`: "q"}, values: map[string]any{}}
	if err := b.srv.meta.eachThread(context.Background(), DevPrincipal.Tenant, f, func(*Thread) bool { rows++; return true }); err != nil {
		t.Fatal(err)
	}
	if want := 1; rows != want {
		t.Errorf("the query returned %d threads for a filter that matches %d", rows, want)
	}
	all := search(map[string]any{"limit": 100})
	if len(all) != 12 {
		t.Fatalf("all threads: %d", len(all))
	}
	var n int
	b.mustDo("POST", "/threads/count", map[string]any{}, &n, 200)
	if n != 12 {
		t.Errorf("count of all: %d", n)
	}
	if got := search(map[string]any{}); len(got) != 10 {
		t.Errorf("default limit: %d threads", len(got))
	}
	byID := slices.Sorted(slices.Values(ids))
	if got := search(map[string]any{"sort_by": "thread_id", "sort_order": "asc", "limit": 100}); !slices.Equal(got, byID) {
		t.Errorf("by thread_id: %q, want %q", got, byID)
	}
	// updated_at: the two threads whose state was set are the most recently updated.
	if got := search(map[string]any{"sort_by": "updated_at", "limit": 2}); !slices.Equal(got, newest(2, 5)) {
		t.Errorf("by updated_at: %q, want %q", got, newest(2, 5))
	}
	if got := search(map[string]any{"sort_by": "status", "limit": 100}); len(got) != 12 {
		t.Errorf("by status: %d threads", len(got))
	}
	var sel []map[string]any
	b.mustDo("POST", "/threads/search", map[string]any{"select": []string{"thread_id", "status"}, "limit": 3}, &sel, 200)
	if len(sel) != 3 || len(sel[0]) != 2 || sel[0]["thread_id"] == nil || sel[0]["status"] != "idle" {
		t.Errorf("select thread_id and status: %v", sel)
	}
	for _, bad := range []map[string]any{{"sort_by": "colour"}, {"sort_order": "sideways"}, {"status": "sleepy"}, {"select": []string{"colour"}}} {
		for _, path := range []string{"/threads/search", "/threads/count"} {
			if code := b.do("POST", path, bad, nil); code != 400 {
				t.Errorf("%s %v: %d, want 400", path, bad, code)
			}
		}
	}
}
