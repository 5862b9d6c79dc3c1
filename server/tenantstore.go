package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/trellis-go/trellis/store"
)

// The store a run sees is its tenant's: every namespace a graph, a tool or an app's route names
// is put under the same hidden first label the /store routes add (tenantLabelPrefix + tenant),
// and the label is taken off what comes back. So what a graph writes is what GET /store/items
// shows that tenant, and no other tenant sees it.

// ErrNoTenant is the error of a tenant-scoped store used where no tenant is known: outside a
// run, and outside a request whose principal the server set (an app's route behind Guard).
var ErrNoTenant = errors.New("server: the store is scoped to a tenant and none is known here (use it inside a run or an authenticated app route, or take a view with server.TenantStore(deps.SharedStore, tenant); deps.SharedStore holds what no tenant owns)")

// TenantStore returns tenant's view of st: namespaces get the hidden tenant label the /store
// routes use, so that items put through the view are the tenant's items in the API, and the
// view finds nothing of another tenant's. st is the server's own store (Deps.SharedStore).
func TenantStore(st store.Store, tenant string) store.Store {
	return principalStore(st, Principal{Tenant: tenant})
}

// principalStore is the view of st the /store routes give p: its namespaces start with
// tenantNS(p, nil).
func principalStore(st store.Store, p Principal) store.Store {
	return tenantView{st: st, prefix: tenantNS(p, nil)}
}

type tenantView struct {
	st     store.Store
	prefix []string
}

func (v tenantView) ns(ns []string) []string {
	out := make([]string, 0, len(v.prefix)+len(ns))
	return append(append(out, v.prefix...), ns...)
}

// strip takes the view's labels off a namespace the backend returned.
func (v tenantView) strip(ns []string) []string {
	if len(ns) >= len(v.prefix) && slices.Equal(ns[:len(v.prefix)], v.prefix) {
		return ns[len(v.prefix):]
	}
	return ns
}

func (v tenantView) Put(ctx context.Context, req store.PutRequest) error {
	if len(req.Namespace) == 0 {
		return store.ErrInvalidNamespace
	}
	req.Namespace = v.ns(req.Namespace)
	return v.st.Put(ctx, req)
}

func (v tenantView) Get(ctx context.Context, req store.GetRequest) (*store.Item, error) {
	if len(req.Namespace) == 0 {
		return nil, store.ErrInvalidNamespace
	}
	req.Namespace = v.ns(req.Namespace)
	it, err := v.st.Get(ctx, req)
	if it != nil {
		it.Namespace = v.strip(it.Namespace)
	}
	return it, err
}

func (v tenantView) Delete(ctx context.Context, req store.DeleteRequest) error {
	if len(req.Namespace) == 0 {
		return store.ErrInvalidNamespace
	}
	req.Namespace = v.ns(req.Namespace)
	return v.st.Delete(ctx, req)
}

func (v tenantView) Search(ctx context.Context, req store.SearchRequest) ([]store.SearchItem, error) {
	req.NamespacePrefix = v.ns(req.NamespacePrefix)
	items, err := v.st.Search(ctx, req)
	for i := range items {
		items[i].Namespace = v.strip(items[i].Namespace)
	}
	return items, err
}

func (v tenantView) ListNamespaces(ctx context.Context, req store.ListNamespacesRequest) ([][]string, error) {
	req.Prefix = v.ns(req.Prefix)
	if req.MaxDepth > 0 {
		req.MaxDepth += len(v.prefix) // the tenant's labels
	}
	nss, err := v.st.ListNamespaces(ctx, req)
	for i := range nss {
		nss[i] = v.strip(nss[i])
	}
	return nss, err
}

// Batch runs a batch in the view: every op's namespace gets the view's labels (as the single
// calls do) and the labels come off what the reads return; the writes go to the backend's
// batch, one transaction on a SQL store.
func (v tenantView) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	return store.RunBatch(ctx, ops, func(ctx context.Context, op store.Op) (store.Result, error) { return store.ReadOp(ctx, v, op) },
		func(ctx context.Context, writes []store.Op) error {
			scoped := make([]store.Op, len(writes))
			for i, w := range writes {
				switch o := w.(type) {
				case store.PutRequest:
					if len(o.Namespace) == 0 {
						return store.ErrInvalidNamespace
					}
					o.Namespace = v.ns(o.Namespace)
					scoped[i] = o
				case store.DeleteRequest:
					if len(o.Namespace) == 0 {
						return store.ErrInvalidNamespace
					}
					o.Namespace = v.ns(o.Namespace)
					scoped[i] = o
				default:
					return fmt.Errorf("server: store batch: %T is not a write", w)
				}
			}
			_, err := store.Batch(ctx, v.st, scoped)
			return err
		})
}

// runPrincipalKey holds, in a run's context, the principal the run acts for.
type runPrincipalKey struct{}

func withRunPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, runPrincipalKey{}, p)
}

// storePrincipal returns who a store call acts for: the run's principal, inside a run; else
// the one the server put in the context (the API's and Guard's requests).
func storePrincipal(ctx context.Context) (Principal, bool) {
	if p, ok := ctx.Value(runPrincipalKey{}).(Principal); ok && p.Tenant != "" {
		return p, true
	}
	if p, ok := PrincipalFrom(ctx); ok && p.Tenant != "" {
		return p, true
	}
	return Principal{}, false
}

// scopedStore is the store graphs, tools and apps are handed (Deps.Store, AppDeps.Compile.Store,
// tool.CallInfo.Store): each call acts in the view of the tenant its context names (see
// storePrincipal), and fails with ErrNoTenant when it names none.
type scopedStore struct{ st store.Store }

func (s scopedStore) view(ctx context.Context) (store.Store, error) {
	p, ok := storePrincipal(ctx)
	if !ok {
		return nil, ErrNoTenant
	}
	return principalStore(s.st, p), nil
}

func (s scopedStore) Put(ctx context.Context, req store.PutRequest) error {
	v, err := s.view(ctx)
	if err != nil {
		return err
	}
	return v.Put(ctx, req)
}

func (s scopedStore) Get(ctx context.Context, req store.GetRequest) (*store.Item, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	return v.Get(ctx, req)
}

func (s scopedStore) Delete(ctx context.Context, req store.DeleteRequest) error {
	v, err := s.view(ctx)
	if err != nil {
		return err
	}
	return v.Delete(ctx, req)
}

func (s scopedStore) Search(ctx context.Context, req store.SearchRequest) ([]store.SearchItem, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	return v.Search(ctx, req)
}

func (s scopedStore) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	return store.Batch(ctx, v, ops)
}

func (s scopedStore) ListNamespaces(ctx context.Context, req store.ListNamespacesRequest) ([][]string, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	return v.ListNamespaces(ctx, req)
}
