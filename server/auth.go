package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Principal is who a request acts for. Every assistant, thread, run and store item belongs to
// Principal.Tenant; the user and permissions reach tools as tool.CallInfo.
type Principal struct {
	User        string   `json:"user"`
	Tenant      string   `json:"tenant"`
	Permissions []string `json:"permissions,omitempty"`
}

// DevPrincipal is who every request acts as in dev mode.
var DevPrincipal = Principal{User: "dev", Tenant: "default", Permissions: []string{"*"}}

// AuthConfig chooses how requests are authenticated: with API keys (header x-api-key, or
// Authorization: Bearer KEY) and/or JWTs (Authorization: Bearer TOKEN). At least one is required
// unless the server runs in dev mode.
type AuthConfig struct {
	// APIKeys maps each key to the principal it acts as; for services.
	APIKeys map[string]Principal
	// JWTSecret verifies HS256 (and, if allowed, HS384/HS512) tokens. Empty turns JWTs off.
	JWTSecret []byte
	// Issuer and Audience must match the token's iss and aud claims; both are required with a
	// JWTSecret. A token must also carry exp.
	Issuer   string
	Audience string
	// Algorithms allowlists the token algorithms; empty means HS256 only. "none" is never
	// accepted.
	Algorithms []string
	// TenantClaim names the claim holding the tenant; empty means "tenant". A token without it
	// is refused.
	TenantClaim string
	// PermissionsClaim names the claim holding the permissions, a list of strings or a
	// space-separated string; empty means "permissions" (and "scope" when that is absent).
	PermissionsClaim string
	// Leeway tolerates clock skew on exp and nbf; zero means 30 seconds.
	Leeway time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	keys map[[32]byte]Principal
}

func (a *AuthConfig) check() error {
	if len(a.APIKeys) == 0 && len(a.JWTSecret) == 0 {
		return &ConfigError{Field: "Auth", Problem: "has neither API keys nor a JWT secret", Hint: "set TRELLIS_JWT_SECRET (with TRELLIS_JWT_ISSUER and TRELLIS_JWT_AUDIENCE) or TRELLIS_API_KEYS, or run with --dev on a local machine"}
	}
	if len(a.JWTSecret) > 0 {
		if a.Issuer == "" || a.Audience == "" {
			return &ConfigError{Field: "Auth.Issuer/Audience", Problem: "must both be set with a JWT secret", Hint: "tokens are checked against them; set TRELLIS_JWT_ISSUER and TRELLIS_JWT_AUDIENCE"}
		}
		if len(a.JWTSecret) < 32 {
			return &ConfigError{Field: "Auth.JWTSecret", Problem: fmt.Sprintf("is %d bytes", len(a.JWTSecret)), Hint: "use a random secret of at least 32 bytes"}
		}
	}
	for _, alg := range a.Algorithms {
		if _, ok := hmacAlgs[alg]; !ok {
			return &ConfigError{Field: "Auth.Algorithms", Problem: fmt.Sprintf("lists %q", alg), Hint: "supported: HS256, HS384, HS512"}
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
		a.Algorithms = []string{"HS256"}
	}
	if a.TenantClaim == "" {
		a.TenantClaim = "tenant"
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
}

var hmacAlgs = map[string]func() hash.Hash{"HS256": sha256.New, "HS384": sha512.New384, "HS512": sha512.New}

func unauthorized(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusUnauthorized, Message: fmt.Sprintf(format, args...), kind: ErrUnauthorized}
}

// authenticate finds the request's principal. It never logs or echoes the credential.
func (a *AuthConfig) authenticate(r *http.Request) (Principal, error) {
	if key := r.Header.Get("X-Api-Key"); key != "" {
		if p, ok := a.keys[sha256.Sum256([]byte(key))]; ok {
			return p, nil
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
		return p, nil
	}
	if len(a.JWTSecret) == 0 {
		return Principal{}, unauthorized("the bearer credential is not a known API key")
	}
	return a.verifyJWT(token)
}

// verifyJWT checks an HMAC-signed JWT: an allowed algorithm, the signature, exp (required),
// nbf, iss and aud, and reads the principal from its claims.
func (a *AuthConfig) verifyJWT(token string) (Principal, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Principal{}, unauthorized("the token is not a JWT (expected three dot-separated parts)")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return Principal{}, unauthorized("the token header cannot be read: %v", err)
	}
	if strings.EqualFold(header.Alg, "none") || !slices.Contains(a.Algorithms, header.Alg) {
		return Principal{}, unauthorized("the token algorithm %q is not allowed (allowed: %s)", header.Alg, strings.Join(a.Algorithms, ", "))
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Principal{}, unauthorized("the token signature is not base64url")
	}
	mac := hmac.New(hmacAlgs[header.Alg], a.JWTSecret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return Principal{}, unauthorized("the token signature does not verify")
	}
	var claims map[string]any
	if err := decodeSegment(parts[1], &claims); err != nil {
		return Principal{}, unauthorized("the token claims cannot be read: %v", err)
	}
	now := a.Now()
	exp, ok := claims["exp"].(float64)
	if !ok {
		return Principal{}, unauthorized("the token has no exp claim")
	}
	if now.After(time.Unix(int64(exp), 0).Add(a.Leeway)) {
		return Principal{}, unauthorized("the token has expired")
	}
	if nbf, ok := claims["nbf"].(float64); ok && now.Add(a.Leeway).Before(time.Unix(int64(nbf), 0)) {
		return Principal{}, unauthorized("the token is not valid yet (nbf)")
	}
	if iss, _ := claims["iss"].(string); iss != a.Issuer {
		return Principal{}, unauthorized("the token issuer %q is not the expected one", iss)
	}
	if !audienceHas(claims["aud"], a.Audience) {
		return Principal{}, unauthorized("the token audience does not include this server")
	}
	p := Principal{}
	p.User, _ = claims["sub"].(string)
	if p.User == "" {
		return Principal{}, unauthorized("the token has no sub claim")
	}
	p.Tenant, _ = claims[a.TenantClaim].(string)
	if p.Tenant == "" {
		return Principal{}, unauthorized("the token has no %q claim naming its tenant", a.TenantClaim)
	}
	perms, ok := claims[a.PermissionsClaim]
	if !ok {
		perms = claims["scope"]
	}
	switch v := perms.(type) {
	case string:
		p.Permissions = strings.Fields(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				p.Permissions = append(p.Permissions, s)
			}
		}
	}
	return p, nil
}

func audienceHas(aud any, want string) bool {
	switch v := aud.(type) {
	case string:
		return v == want
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && s == want {
				return true
			}
		}
	}
	return false
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
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

// PrincipalFrom returns the principal a request acts for.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
