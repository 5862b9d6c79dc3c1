// Package auth holds the internals of the server's authentication: JWT verification (HMAC
// with a shared secret, or RS*, PS*, ES* and EdDSA with public keys from a JWKS), fetching
// and caching the JWKS, and reading a principal's user, tenant and permissions from claims.
// The server's public types (AuthConfig, Principal, PrincipalFrom, SignJWT) stay in package
// server and use this one.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"time"
)

var hmacAlgs = map[string]func() hash.Hash{"HS256": sha256.New, "HS384": sha512.New384, "HS512": sha512.New}

// IsHMAC reports whether alg is an HMAC algorithm this package checks (with a secret).
func IsHMAC(alg string) bool { _, ok := hmacAlgs[alg]; return ok }

// IsAsymmetric reports whether alg is a public-key algorithm this package checks (with a JWKS).
func IsAsymmetric(alg string) bool { _, ok := asymmetricAlgs[alg]; return ok }

// Verifier checks JWTs. Its fields are the server's AuthConfig's, defaults already applied.
type Verifier struct {
	Secret           []byte // HMAC; empty turns HMAC tokens off
	JWKS             *JWKS  // public keys; nil turns such tokens off
	Algorithms       []string
	Issuer, Audience string
	UserClaim        string
	TenantClaim      string
	PermissionsClaim string
	DefaultTenant    string
	Leeway           time.Duration
	Now              func() time.Time
}

// Claims is who a verified token names.
type Claims struct {
	User        string
	Tenant      string
	Permissions []string
}

// Rejected is a token that does not pass; Msg says why (the server answers it with a 401).
type Rejected struct{ Msg string }

func (e *Rejected) Error() string { return e.Msg }

func reject(format string, args ...any) *Rejected {
	return &Rejected{Msg: fmt.Sprintf(format, args...)}
}

// Verify checks a JWT: an allowed algorithm, the signature (HMAC with the secret, or a public
// key of the JWKS that fits the algorithm), exp (required), nbf, iss and aud, and reads the
// claims. A token that does not pass is a *Rejected; a token whose key cannot be fetched is an
// error wrapping ErrJWKSUnavailable (the credential may be good).
func (v *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, reject("the token is not a JWT (expected three dot-separated parts)")
	}
	var header struct {
		Alg  string          `json:"alg"`
		Kid  string          `json:"kid"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return Claims{}, reject("the token header cannot be read: %v", err)
	}
	if strings.EqualFold(header.Alg, "none") || !slices.Contains(v.Algorithms, header.Alg) {
		return Claims{}, reject("the token algorithm %q is not allowed (allowed: %s)", header.Alg, strings.Join(v.Algorithms, ", "))
	}
	if len(header.Crit) > 0 {
		return Claims{}, reject("the token has critical header extensions (crit), which this server does not understand")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Claims{}, reject("the token signature is not base64url")
	}
	signed := []byte(parts[0] + "." + parts[1])
	if newHash, ok := hmacAlgs[header.Alg]; ok {
		if len(v.Secret) == 0 {
			return Claims{}, reject("the token algorithm %q needs a secret this server does not have", header.Alg)
		}
		mac := hmac.New(newHash, v.Secret)
		mac.Write(signed)
		if !hmac.Equal(sig, mac.Sum(nil)) {
			return Claims{}, reject("the token signature does not verify")
		}
	} else {
		if v.JWKS == nil {
			return Claims{}, reject("the token algorithm %q needs a JWKS this server does not have", header.Alg)
		}
		keys, err := v.JWKS.key(ctx, header.Kid, header.Alg)
		if errors.Is(err, ErrJWKSUnavailable) {
			return Claims{}, err
		}
		if err != nil {
			return Claims{}, reject("the token cannot be checked: %v", err)
		}
		if !verifyAsymmetric(header.Alg, keys, signed, sig) {
			return Claims{}, reject("the token signature does not verify")
		}
	}
	var claims map[string]any
	if err := decodeSegment(parts[1], &claims); err != nil {
		return Claims{}, reject("the token claims cannot be read: %v", err)
	}
	now := v.Now()
	exp, ok := claims["exp"].(float64)
	if !ok {
		return Claims{}, reject("the token has no exp claim")
	}
	if now.After(time.Unix(int64(exp), 0).Add(v.Leeway)) {
		return Claims{}, reject("the token has expired")
	}
	if nbf, ok := claims["nbf"].(float64); ok && now.Add(v.Leeway).Before(time.Unix(int64(nbf), 0)) {
		return Claims{}, reject("the token is not valid yet (nbf)")
	}
	if iss, _ := claims["iss"].(string); iss != v.Issuer {
		return Claims{}, reject("the token issuer %q is not the expected one", iss)
	}
	if !audienceHas(claims["aud"], v.Audience) {
		return Claims{}, reject("the token audience does not include this server")
	}
	var c Claims
	c.User, _ = claimAt(claims, v.UserClaim).(string)
	if c.User == "" {
		return Claims{}, reject("the token has no %q claim naming its user", v.UserClaim)
	}
	c.Tenant, _ = claimAt(claims, v.TenantClaim).(string)
	if c.Tenant == "" {
		if v.DefaultTenant == "" {
			return Claims{}, reject("the token has no %q claim naming its tenant (the server has no default tenant)", v.TenantClaim)
		}
		c.Tenant = v.DefaultTenant
	}
	perms := claimAt(claims, v.PermissionsClaim)
	if perms == nil {
		perms = claims["scope"]
	}
	switch p := perms.(type) {
	case string:
		c.Permissions = strings.Fields(p)
	case []any:
		for _, x := range p {
			if s, ok := x.(string); ok {
				c.Permissions = append(c.Permissions, s)
			}
		}
	}
	return c, nil
}

// claimAt reads a claim by name; a name with dots that is not itself a claim walks nested
// objects ("app_metadata.tenant").
func claimAt(claims map[string]any, name string) any {
	if v, ok := claims[name]; ok {
		return v
	}
	var cur any = claims
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
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
