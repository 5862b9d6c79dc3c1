package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/server/internal/auth"
	"github.com/trellis-go/trellis/tool"
)

// Principal is who a request acts for: the one identity of the API's routes, of app routes and
// app transports (AppDeps.Guard, AppDeps.Authenticate, the appstream kit) and of tools (a run's
// principal reaches its tools as tool.CallInfo; [PrincipalFrom] reads it from either). Every
// assistant, thread, run and store item belongs to Principal.Tenant.
type Principal struct {
	User        string   `json:"user"`
	Tenant      string   `json:"tenant"`
	Permissions []string `json:"permissions,omitempty"`
	// PerUser scopes the principal to its own threads, runs and store items inside its tenant:
	// threads it creates are stamped with metadata "owner" = User, another user's threads and
	// runs answer 404, and its store items live under a namespace of its own. Tokens get it
	// from AuthConfig.PerUser; an API key's principal sets it itself.
	PerUser bool `json:"per_user,omitempty"`
}

// PermTenantWide is the permission that keeps an API key's principal tenant-wide under
// AuthConfig.PerUser: it sees the records of every user of its tenant, as a service needs.
// (`trellis serve`: TRELLIS_API_KEYS="KEY=svc@acme:tenant-wide".) Tokens do not get it from
// their claims.
const PermTenantWide = "tenant-wide"

// DevPrincipal is who every request acts as in dev mode.
var DevPrincipal = Principal{User: "dev", Tenant: "default", Permissions: []string{"*"}}

// AuthConfig chooses how requests are authenticated: with API keys (header x-api-key, or
// Authorization: Bearer KEY) and/or JWTs (Authorization: Bearer TOKEN) signed with a shared
// secret (HMAC) or with keys an identity provider publishes as a JWKS. At least one is required
// unless the server runs in dev mode.
type AuthConfig struct {
	// APIKeys maps each key to the principal it acts as; for services.
	APIKeys map[string]Principal
	// JWTSecret verifies HS256 (and, if allowed, HS384/HS512) tokens. Empty turns HMAC tokens
	// off.
	JWTSecret []byte
	// JWKSURL is where the public keys of RS*, PS*, ES* and EdDSA tokens are published (an
	// identity provider's jwks_uri). It must be https, or http on a loopback host. Keys are
	// cached; see JWKSRefreshInterval and JWKSCacheTTL. Empty turns such tokens off.
	JWKSURL string
	// JWKSRefreshInterval is the least time between two fetches of the JWKS: a token whose key
	// is unknown fetches the set again only when the last fetch is older. Zero means 30 seconds.
	JWKSRefreshInterval time.Duration
	// JWKSCacheTTL is how long fetched keys are fresh when the JWKS answer has no Cache-Control
	// max-age; stale keys are still used while a new fetch fails. Zero means an hour.
	JWKSCacheTTL time.Duration
	// JWKSClient fetches the JWKS; nil means a client with a 5 second timeout.
	JWKSClient *http.Client
	// Issuer and Audience must match the token's iss and aud claims; both are required with a
	// JWTSecret or a JWKSURL. A token must also carry exp.
	Issuer   string
	Audience string
	// Algorithms allowlists the token algorithms: HS256, HS384, HS512 (with JWTSecret), RS256,
	// RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA (with JWKSURL). Empty
	// means HS256 with a secret, plus RS256, RS384, RS512, PS256, ES256, ES384 and EdDSA with
	// a JWKS. "none" is never accepted, and a key is only used for the algorithms of its type.
	Algorithms []string
	// TenantClaim names the claim holding the tenant; empty means "tenant". A token without it
	// is refused unless DefaultTenant is set. A dotted name ("app_metadata.tenant") reads a
	// nested claim.
	TenantClaim string
	// DefaultTenant is the tenant of a token that has no tenant claim (Supabase and most
	// identity providers issue tokens with a sub and no tenant). Empty refuses such tokens.
	DefaultTenant string
	// UserClaim names the claim holding the user; empty means "sub". A dotted name reads a
	// nested claim.
	UserClaim string
	// PerUser scopes every principal to its own user inside the tenant (see
	// Principal.PerUser): one user of a tenant cannot read another's threads, runs, crons or
	// store items. It applies to tokens and to API keys alike, except an API key whose
	// principal has the permission PermTenantWide (a service's key that sees every user's
	// records of its tenant).
	PerUser bool
	// PermissionsClaim names the claim holding the permissions, a list of strings or a
	// space-separated string; empty means "permissions" (and "scope" when that is absent).
	PermissionsClaim string
	// Leeway tolerates clock skew on exp and nbf; zero means 30 seconds.
	Leeway time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	keys map[[32]byte]Principal
	jwks *auth.JWKS
}

func (a *AuthConfig) check() error {
	if len(a.APIKeys) == 0 && len(a.JWTSecret) == 0 && a.JWKSURL == "" {
		return &ConfigError{Field: "Auth", Problem: "has no API keys, JWT secret or JWKS URL", Hint: "set TRELLIS_JWT_SECRET or TRELLIS_JWKS_URL (with TRELLIS_JWT_ISSUER and TRELLIS_JWT_AUDIENCE) or TRELLIS_API_KEYS, or run with --dev on a local machine"}
	}
	if (len(a.JWTSecret) > 0 || a.JWKSURL != "") && (a.Issuer == "" || a.Audience == "") {
		return &ConfigError{Field: "Auth.Issuer/Audience", Problem: "must both be set with a JWT secret or a JWKS URL", Hint: "tokens are checked against them; set TRELLIS_JWT_ISSUER and TRELLIS_JWT_AUDIENCE"}
	}
	if len(a.JWTSecret) > 0 && len(a.JWTSecret) < 32 {
		return &ConfigError{Field: "Auth.JWTSecret", Problem: fmt.Sprintf("is %d bytes", len(a.JWTSecret)), Hint: "use a random secret of at least 32 bytes"}
	}
	if a.JWKSURL != "" {
		u, err := url.Parse(a.JWKSURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return &ConfigError{Field: "Auth.JWKSURL", Problem: fmt.Sprintf("is %q", a.JWKSURL), Hint: "give the identity provider's jwks_uri, e.g. https://issuer.example.com/.well-known/jwks.json"}
		}
		if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
			return &ConfigError{Field: "Auth.JWKSURL", Problem: "is plain http on a host that is not loopback", Hint: "keys fetched without TLS could be replaced on the way; use https"}
		}
	}
	if a.JWKSRefreshInterval < 0 || a.JWKSCacheTTL < 0 {
		return &ConfigError{Field: "Auth.JWKSRefreshInterval/JWKSCacheTTL", Problem: "is negative", Hint: "use 0 for the defaults (30s and 1h)"}
	}
	for _, alg := range a.Algorithms {
		hmacAlg, asymAlg := auth.IsHMAC(alg), auth.IsAsymmetric(alg)
		switch {
		case hmacAlg && len(a.JWTSecret) == 0:
			return &ConfigError{Field: "Auth.Algorithms", Problem: fmt.Sprintf("lists %q but there is no JWT secret", alg), Hint: "HMAC algorithms need TRELLIS_JWT_SECRET; a JWKS's public keys are never used as HMAC secrets"}
		case asymAlg && a.JWKSURL == "":
			return &ConfigError{Field: "Auth.Algorithms", Problem: fmt.Sprintf("lists %q but there is no JWKS URL", alg), Hint: "public-key algorithms need TRELLIS_JWKS_URL"}
		case !hmacAlg && !asymAlg:
			return &ConfigError{Field: "Auth.Algorithms", Problem: fmt.Sprintf("lists %q", alg), Hint: "supported: HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA"}
		}
	}
	for k, p := range a.APIKeys {
		if len(k) < 16 {
			return &ConfigError{Field: "Auth.APIKeys", Problem: "has a key shorter than 16 characters", Hint: "use long random keys"}
		}
		if p.Tenant == "" {
			return &ConfigError{Field: "Auth.APIKeys", Problem: fmt.Sprintf("gives user %q no tenant", p.User), Hint: "every principal belongs to a tenant"}
		}
	}
	return nil
}

func (a *AuthConfig) prepare() {
	a.keys = map[[32]byte]Principal{}
	for k, p := range a.APIKeys {
		a.keys[sha256.Sum256([]byte(k))] = p
	}
	if len(a.Algorithms) == 0 {
		if len(a.JWTSecret) > 0 {
			a.Algorithms = append(a.Algorithms, "HS256")
		}
		if a.JWKSURL != "" {
			a.Algorithms = append(a.Algorithms, auth.DefaultJWKSAlgs...)
		}
	}
	if a.TenantClaim == "" {
		a.TenantClaim = "tenant"
	}
	if a.UserClaim == "" {
		a.UserClaim = "sub"
	}
	if a.PermissionsClaim == "" {
		a.PermissionsClaim = "permissions"
	}
	if a.Leeway == 0 {
		a.Leeway = 30 * time.Second
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	if a.JWKSURL != "" {
		interval, ttl := a.JWKSRefreshInterval, a.JWKSCacheTTL
		if interval == 0 {
			interval = DefaultJWKSRefreshInterval
		}
		if ttl == 0 {
			ttl = DefaultJWKSCacheTTL
		}
		a.jwks = auth.NewJWKS(a.JWKSURL, a.JWKSClient, interval, ttl, a.Now)
	}
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func unauthorized(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusUnauthorized, Message: fmt.Sprintf(format, args...), kind: ErrUnauthorized}
}

// authenticate finds the request's principal. It never logs or echoes the credential.
func (a *AuthConfig) authenticate(r *http.Request) (Principal, error) {
	if key := r.Header.Get("X-Api-Key"); key != "" {
		if p, ok := a.keys[sha256.Sum256([]byte(key))]; ok {
			return a.keyPrincipal(p), nil
		}
		return Principal{}, unauthorized("the API key is not valid")
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return Principal{}, unauthorized("no credentials: send Authorization: Bearer <token> or x-api-key")
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return Principal{}, unauthorized("the Authorization header must be 'Bearer <token>'")
	}
	if p, ok := a.keys[sha256.Sum256([]byte(token))]; ok {
		return a.keyPrincipal(p), nil
	}
	if len(a.JWTSecret) == 0 && a.jwks == nil {
		return Principal{}, unauthorized("the bearer credential is not a known API key")
	}
	return a.verifyJWT(r.Context(), token)
}

// keyPrincipal is an API key's principal, per-user under PerUser unless it is tenant-wide.
func (a *AuthConfig) keyPrincipal(p Principal) Principal {
	if a.PerUser && !slices.Contains(p.Permissions, PermTenantWide) {
		p.PerUser = true
	}
	return p
}

// verifyJWT checks a JWT (see auth.Verifier.Verify) and reads the principal from its claims.
func (a *AuthConfig) verifyJWT(ctx context.Context, token string) (Principal, error) {
	v := auth.Verifier{Secret: a.JWTSecret, JWKS: a.jwks, Algorithms: a.Algorithms, Issuer: a.Issuer, Audience: a.Audience,
		UserClaim: a.UserClaim, TenantClaim: a.TenantClaim, PermissionsClaim: a.PermissionsClaim, DefaultTenant: a.DefaultTenant,
		Leeway: a.Leeway, Now: a.Now}
	c, err := v.Verify(ctx, token)
	if errors.Is(err, ErrJWKSUnavailable) {
		return Principal{}, &APIError{Status: http.StatusServiceUnavailable, kind: ErrJWKSUnavailable,
			Message: "the token's signing key cannot be fetched: " + err.Error(),
			Hint:    "the identity provider's key set is unreachable; retry shortly"}
	}
	if err != nil {
		return Principal{}, unauthorized("%s", err.Error())
	}
	return Principal{User: c.User, Tenant: c.Tenant, Permissions: c.Permissions, PerUser: a.PerUser}, nil
}

// SignJWT makes an HS256 token with the given claims; for tests and for tools that mint
// service tokens.
func SignJWT(secret []byte, claims map[string]any) string {
	enc := base64.RawURLEncoding
	h := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	c, _ := json.Marshal(claims)
	body := h + "." + enc.EncodeToString(c)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(body))
	return body + "." + enc.EncodeToString(mac.Sum(nil))
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns who ctx acts for: the principal of a request (an API route, an app
// route behind AppDeps.Guard, an appstream connection), or, inside a run, the run's principal
// as its tools receive it (tool.CallInfo's user, tenant and permissions).
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	if p, ok := ctx.Value(principalKey{}).(Principal); ok {
		return p, true
	}
	if p, ok := ctx.Value(runPrincipalKey{}).(Principal); ok && p.Tenant != "" {
		return p, true // a run's, PerUser included (tenantstore.go)
	}
	if info, ok := tool.CallInfoFrom(ctx); ok && info.Tenant != "" {
		return Principal{User: info.User, Tenant: info.Tenant, Permissions: info.Permissions}, true
	}
	return Principal{}, false
}

// WithPrincipal returns a context that acts for p, as a request authenticated as p does: for
// app code that acts for a principal outside a request (a job, a test).
func WithPrincipal(ctx context.Context, p Principal) context.Context { return withPrincipal(ctx, p) }
