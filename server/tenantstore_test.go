package server

import (
	"context"
	"errors"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
	"github.com/trellis-go/trellis/tool"
)

// memoState is the state of the test graph "memo", which writes to and reads from the store a
// run sees.
type memoState struct {
	Key  string `json:"key"`
	Text string `json:"text"`
	// Seed is what the run found under ["seed"]/"s"; Found lists the keys under ["notes"].
	Seed  string   `json:"seed,omitempty"`
	Found []string `json:"found,omitempty"`
}

func buildMemo(deps Deps) (graph.Runnable, error) {
	g := graph.New[memoState]()
	g.AddNode("write", func(ctx context.Context, s memoState) (memoState, error) {
		st := graph.StoreFrom(ctx)
		if st == nil {
			return s, errors.New("no store in the graph")
		}
		if err := st.Put(ctx, store.PutRequest{Namespace: []string{"notes"}, Key: s.Key, Value: map[string]any{"text": s.Text}}); err != nil {
			return s, err
		}
		// A tool's view (tool.CallInfo.Store) is the same tenant's.
		info, _ := tool.CallInfoFrom(ctx)
		ts := info.Store
		if ts == nil {
			return s, errors.New("no store in the call info")
		}
		if err := ts.Put(ctx, store.PutRequest{Namespace: []string{"tool"}, Key: s.Key, Value: map[string]any{"by": "tool"}}); err != nil {
			return s, err
		}
		if it, err := st.Get(ctx, store.GetRequest{Namespace: []string{"seed"}, Key: "s"}); err == nil {
			s.Seed, _ = it.Value["text"].(string)
		}
		items, err := st.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"notes"}, Limit: 50})
		if err != nil {
			return s, err
		}
		for _, it := range items {
			if len(it.Namespace) != 1 || it.Namespace[0] != "notes" {
				return s, errors.New("search gave a namespace with the tenant's label: " + it.Namespace[0])
			}
			s.Found = append(s.Found, it.Key)
		}
		return s, nil
	})
	g.AddEdge(graph.START, "write").AddEdge("write", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "memo", Saver: deps.Saver, Store: deps.Store}))
}

func TestTenantStoreSQLite(t *testing.T) {
	t.Parallel()
	testTenantStore(t, Config{})
}

func TestTenantStorePostgres(t *testing.T) {
	t.Parallel()
	testTenantStore(t, Config{DatabaseURL: pgURL(t)})
}

// testTenantStore checks that what a graph writes is its tenant's store as the /store routes
// show it, and invisible to another tenant.
func testTenantStore(t *testing.T, cfg Config) {
	const keyA, keyB = "tenant-a-key-0123456789", "tenant-b-key-0123456789"
	cfg.Auth = AuthConfig{APIKeys: map[string]Principal{
		keyA: {User: "ann", Tenant: "acme", Permissions: []string{"*"}},
		keyB: {User: "bob", Tenant: "globex", Permissions: []string{"*"}},
	}}
	b := setup(t, setupOpts{cfg: cfg, extra: []GraphSpec{{ID: "memo", Build: buildMemo}}})
	as := func(key string) *bundle { c := *b; c.token = key; return &c }
	a, o := as(keyA), as(keyB)

	// The tenant's own item, put through the API, is what its run reads.
	a.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"seed"}, "key": "s", "value": map[string]any{"text": "from the API"}}, nil, 204)
	var out memoState
	a.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "memo", "input": map[string]any{"key": "a1", "text": "acme's note"}}, &out, 200)
	if out.Seed != "from the API" || len(out.Found) != 1 || out.Found[0] != "a1" {
		t.Fatalf("acme's run: %+v", out)
	}
	out = memoState{}
	o.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "memo", "input": map[string]any{"key": "b1", "text": "globex's note"}}, &out, 200)
	if out.Seed != "" || len(out.Found) != 1 || out.Found[0] != "b1" {
		t.Fatalf("globex's run sees another tenant's items: %+v", out)
	}

	// What the run wrote is the tenant's, through the API, and only the tenant's.
	var item map[string]any
	a.mustDo("GET", "/store/items?namespace=notes&key=a1", nil, &item, 200)
	if v, _ := item["value"].(map[string]any); v["text"] != "acme's note" {
		t.Fatalf("acme's item: %v", item)
	}
	if ns, _ := item["namespace"].([]any); len(ns) != 1 || ns[0] != "notes" {
		t.Fatalf("the namespace shows the hidden label: %v", item)
	}
	a.mustDo("GET", "/store/items?namespace=tool&key=a1", nil, &item, 200)
	if v, _ := item["value"].(map[string]any); v["by"] != "tool" {
		t.Fatalf("the tool's item: %v", item)
	}
	item = nil
	o.mustDo("GET", "/store/items?namespace=notes&key=a1", nil, &item, 200)
	if item != nil {
		t.Fatalf("globex reads acme's item: %v", item)
	}
	var found struct{ Items []itemJSON }
	o.mustDo("POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"notes"}}, &found, 200)
	if len(found.Items) != 1 || found.Items[0].Key != "b1" {
		t.Fatalf("globex's search: %+v", found.Items)
	}
	var nss struct{ Namespaces [][]string }
	a.mustDo("POST", "/store/namespaces", map[string]any{}, &nss, 200)
	if len(nss.Namespaces) != 3 {
		t.Fatalf("acme's namespaces: %v", nss.Namespaces)
	}
}

// TestTenantStoreViews checks the views themselves: a tenant's view strips its label and sees
// nothing of another's; the scoped store refuses a call with no tenant to act for.
func TestTenantStoreViews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, err := memstore.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	acme, globex := TenantStore(raw, "acme"), TenantStore(raw, "globex")
	if err = acme.Put(ctx, store.PutRequest{Namespace: []string{"a", "b"}, Key: "k", Value: map[string]any{"x": 1.0}}); err != nil {
		t.Fatal(err)
	}
	it, err := acme.Get(ctx, store.GetRequest{Namespace: []string{"a", "b"}, Key: "k"})
	if err != nil || len(it.Namespace) != 2 || it.Namespace[0] != "a" {
		t.Fatalf("get: %+v %v", it, err)
	}
	if _, err := raw.Get(ctx, store.GetRequest{Namespace: []string{"tenant:acme", "a", "b"}, Key: "k"}); err != nil {
		t.Fatalf("the item is not under the label the /store routes use: %v", err)
	}
	if _, err := globex.Get(ctx, store.GetRequest{Namespace: []string{"a", "b"}, Key: "k"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant reads it: %v", err)
	}
	nss, err := acme.ListNamespaces(ctx, store.ListNamespacesRequest{MaxDepth: 1})
	if err != nil || len(nss) != 1 || len(nss[0]) != 1 || nss[0][0] != "a" {
		t.Fatalf("namespaces: %v %v", nss, err)
	}
	if err := acme.Put(ctx, store.PutRequest{Key: "k", Value: map[string]any{}}); !errors.Is(err, store.ErrInvalidNamespace) {
		t.Fatalf("an empty namespace is taken: %v", err)
	}
	scoped := scopedStore{st: raw}
	if _, err := scoped.Search(ctx, store.SearchRequest{}); !errors.Is(err, ErrNoTenant) {
		t.Fatalf("a call with no tenant: %v", err)
	}
	items, err := scoped.Search(withRunPrincipal(ctx, Principal{User: "ann", Tenant: "acme"}), store.SearchRequest{})
	if err != nil || len(items) != 1 || items[0].Namespace[0] != "a" {
		t.Fatalf("in a run of acme: %+v %v", items, err)
	}
	items, err = scoped.Search(withPrincipal(ctx, Principal{User: "bob", Tenant: "globex"}), store.SearchRequest{})
	if err != nil || len(items) != 0 {
		t.Fatalf("in a request of globex: %+v %v", items, err)
	}
}

// TestTenantStorePerUser: a per-user principal's run writes under its user's label, as the
// /store routes show it that user, and another user of the tenant does not see it.
func TestTenantStorePerUser(t *testing.T) {
	t.Parallel()
	const keyA, keyB = "user-ann-key-0123456789", "user-bea-key-0123456789"
	cfg := Config{Auth: AuthConfig{APIKeys: map[string]Principal{
		keyA: {User: "ann", Tenant: "acme", Permissions: []string{"*"}, PerUser: true},
		keyB: {User: "bea", Tenant: "acme", Permissions: []string{"*"}, PerUser: true},
	}}}
	b := setup(t, setupOpts{cfg: cfg, extra: []GraphSpec{{ID: "memo", Build: buildMemo}}})
	as := func(key string) *bundle { c := *b; c.token = key; return &c }
	ann, bea := as(keyA), as(keyB)
	var out memoState
	ann.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "memo", "input": map[string]any{"key": "a1", "text": "ann's note"}}, &out, 200)
	var item map[string]any
	ann.mustDo("GET", "/store/items?namespace=notes&key=a1", nil, &item, 200)
	if v, _ := item["value"].(map[string]any); v["text"] != "ann's note" {
		t.Fatalf("ann's item: %v", item)
	}
	item = nil
	bea.mustDo("GET", "/store/items?namespace=notes&key=a1", nil, &item, 200)
	if item != nil {
		t.Fatalf("bea reads ann's item: %v", item)
	}
	out = memoState{}
	bea.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "memo", "input": map[string]any{"key": "b1", "text": "bea's note"}}, &out, 200)
	if len(out.Found) != 1 || out.Found[0] != "b1" {
		t.Fatalf("bea's run sees ann's items: %+v", out)
	}
}

// A batch through a tenant's view: its writes land under the tenant's label in one backend
// batch, its reads see only the tenant's items with the label taken off, and another tenant's
// view finds none of them. The scoped store refuses a batch outside a tenant.
func TestTenantStoreBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	backing, err := memstore.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	acme, other := TenantStore(backing, "acme"), TenantStore(backing, "other")
	if err := other.Put(ctx, store.PutRequest{Namespace: []string{"notes"}, Key: "theirs", Value: map[string]any{"t": "other"}}); err != nil {
		t.Fatal(err)
	}
	res, err := store.Batch(ctx, acme, []store.Op{
		store.PutRequest{Namespace: []string{"notes"}, Key: "mine", Value: map[string]any{"t": "acme"}},
		store.GetRequest{Namespace: []string{"notes"}, Key: "theirs"},
		store.SearchRequest{NamespacePrefix: []string{"notes"}},
		store.ListNamespacesRequest{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[1].Item != nil || len(res[2].Items) != 0 || len(res[3].Namespaces) != 0 {
		t.Fatalf("acme's batch read another tenant's items: %+v", res)
	}
	if _, err := store.Batch(ctx, acme, []store.Op{store.PutRequest{Namespace: nil, Key: "k", Value: map[string]any{}}}); !errors.Is(err, store.ErrInvalidNamespace) {
		t.Fatalf("a put without a namespace: %v, want ErrInvalidNamespace", err)
	}
	res, err = store.Batch(ctx, acme, []store.Op{
		store.GetRequest{Namespace: []string{"notes"}, Key: "mine"},
		store.ListNamespacesRequest{},
		store.DeleteRequest{Namespace: []string{"notes"}, Key: "theirs"}, // acme's "theirs": none
	})
	if err != nil {
		t.Fatal(err)
	}
	if it := res[0].Item; it == nil || it.Value["t"] != "acme" || len(it.Namespace) != 1 || it.Namespace[0] != "notes" {
		t.Fatalf("acme's get: %+v", it)
	}
	if len(res[1].Namespaces) != 1 || len(res[1].Namespaces[0]) != 1 || res[1].Namespaces[0][0] != "notes" {
		t.Fatalf("acme's namespaces: %v, want [[notes]]", res[1].Namespaces)
	}
	if _, err := other.Get(ctx, store.GetRequest{Namespace: []string{"notes"}, Key: "theirs"}); err != nil {
		t.Fatalf("acme's batch deleted the other tenant's item: %v", err)
	}
	if _, err := other.Get(ctx, store.GetRequest{Namespace: []string{"notes"}, Key: "mine"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the other tenant sees acme's put: %v", err)
	}
	// The backend holds acme's item under the hidden label.
	all, err := backing.Search(ctx, store.SearchRequest{Limit: 10})
	if err != nil || len(all) != 2 {
		t.Fatalf("the backing store holds %d items (%v), want 2", len(all), err)
	}
	for _, it := range all {
		if len(it.Namespace) != 2 || it.Namespace[1] != "notes" {
			t.Fatalf("backing namespace %v has no tenant label", it.Namespace)
		}
	}
	if _, err := store.Batch(ctx, scopedStore{st: backing}, []store.Op{store.GetRequest{Namespace: []string{"notes"}, Key: "mine"}}); !errors.Is(err, ErrNoTenant) {
		t.Fatalf("a scoped store's batch outside a tenant: %v, want ErrNoTenant", err)
	}
	if res, err := store.Batch(withRunPrincipal(ctx, Principal{Tenant: "acme"}), scopedStore{st: backing}, []store.Op{store.GetRequest{Namespace: []string{"notes"}, Key: "mine"}}); err != nil || res[0].Item == nil {
		t.Fatalf("a scoped store's batch in acme's run: %+v (%v)", res, err)
	}
}
