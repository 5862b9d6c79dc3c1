package server

import "context"

// Per-user ownership inside a tenant (AuthConfig.PerUser, Principal.PerUser). A tenant's
// records are its own by the tenant column every query names; a per-user principal narrows that
// to its user:
//
//   - a thread it creates (POST /threads, a run on a new thread, a copy) has metadata "owner"
//     set to its user, and nobody can patch that key to another user;
//   - it reads, searches, counts, runs on, patches and deletes only threads whose owner is its
//     user; any other thread answers 404, as another tenant's does;
//   - it reads only the runs it created (a run records its creator);
//   - its store items live under a namespace label of its user's, after the tenant's, which the
//     API adds and strips as it does the tenant's (see userNS).
//
// A principal that is not per-user (a service's API key with PermTenantWide, any principal
// without AuthConfig.PerUser, the dev principal) sees the tenant's records of every user, and
// the "user:<id>" label of per-user store items.
//
// The scoping follows the request's context: the API's routes and AppDeps.Guard put the
// principal there, and code calling AppDeps.Runs should pass such a context (or one made with
// WithPrincipal) for runs it starts on a user's behalf.

// OwnerKey is the thread metadata key that names a per-user thread's owner.
const OwnerKey = "owner"

// userLabelPrefix starts the namespace label that holds a per-user principal's store items.
const userLabelPrefix = "user:"

// scopedUser returns the user ctx's principal is scoped to, or "" when it is not per-user.
func scopedUser(ctx context.Context) string {
	p, ok := PrincipalFrom(ctx)
	if !ok || !p.PerUser {
		return ""
	}
	return p.User
}

// stampOwner sets a new thread's owner to ctx's per-user principal, and the metadata
// Config.Authorize stamps (authorize.go).
func stampOwner(ctx context.Context, md map[string]any) map[string]any {
	md = authStamp(ctx, md)
	u := scopedUser(ctx)
	if u == "" {
		return md
	}
	if md == nil {
		md = map[string]any{}
	}
	md[OwnerKey] = u
	return md
}

// ownerSees reports whether ctx's principal may see a thread with metadata md (and whether
// it has the metadata Config.Authorize's filters ask for).
func ownerSees(ctx context.Context, md map[string]any) bool {
	if f := authThreadFilters(ctx); len(f) > 0 && !matches(md, f) {
		return false
	}
	u := scopedUser(ctx)
	if u == "" {
		return true
	}
	owner, _ := md[OwnerKey].(string)
	return owner == u
}

// ownerSeesRun reports whether ctx's principal may see a run.
func ownerSeesRun(ctx context.Context, r *Run) bool {
	u := scopedUser(ctx)
	if u == "" {
		return true
	}
	return r.Kwargs != nil && r.Kwargs.User == u
}
