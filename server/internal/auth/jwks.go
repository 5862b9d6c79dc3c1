package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	_ "crypto/sha256" // the hashes of RS256/ES256/PS256
	_ "crypto/sha512" // the hashes of RS384/RS512/ES384/ES512/PS384/PS512
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A JWKS (JSON Web Key Set, RFC 7517) is where an identity provider publishes the public keys
// its tokens are signed with. The server fetches it from AuthConfig.JWKSURL, keeps the keys,
// and fetches it again when a token names a key it does not know (the provider rotated its
// keys) or when the set's Cache-Control max-age has passed, but never more often than once per
// AuthConfig.JWKSRefreshInterval: a flood of tokens with made-up key IDs costs the provider one
// request per interval, not one per token.

// Limits of a JWKS fetch. (The defaults of the refresh interval and the cache TTL are the
// server's, DefaultJWKSRefreshInterval and DefaultJWKSCacheTTL.)
const (
	// jwksMaxBytes caps a key set's size; real ones are a few KB.
	jwksMaxBytes = 1 << 20
	// jwksFetchTimeout bounds one fetch of the key set.
	jwksFetchTimeout = 5 * time.Second
	// jwksMaxAge caps a max-age the provider sends, so keys it revoked stop working in a day
	// at most.
	jwksMaxAge = 24 * time.Hour
)

// ErrJWKSUnavailable: the key set cannot be fetched, so a token signed with a key the server
// does not have yet cannot be checked. Requests answer 503: the credential may be good.
var ErrJWKSUnavailable = errors.New("server: the JWKS endpoint is unavailable")

// asymmetric describes a signature algorithm checked with a public key from the JWKS.
type asymmetric struct {
	kty   string      // the JWK key type it needs: RSA, EC or OKP
	hash  crypto.Hash // zero for EdDSA, which hashes inside
	curve elliptic.Curve
	pss   bool
}

var asymmetricAlgs = map[string]asymmetric{
	"RS256": {kty: "RSA", hash: crypto.SHA256},
	"RS384": {kty: "RSA", hash: crypto.SHA384},
	"RS512": {kty: "RSA", hash: crypto.SHA512},
	"PS256": {kty: "RSA", hash: crypto.SHA256, pss: true},
	"PS384": {kty: "RSA", hash: crypto.SHA384, pss: true},
	"PS512": {kty: "RSA", hash: crypto.SHA512, pss: true},
	"ES256": {kty: "EC", hash: crypto.SHA256, curve: elliptic.P256()},
	"ES384": {kty: "EC", hash: crypto.SHA384, curve: elliptic.P384()},
	"ES512": {kty: "EC", hash: crypto.SHA512, curve: elliptic.P521()},
	"EdDSA": {kty: "OKP"},
}

// DefaultJWKSAlgs are the algorithms accepted from a JWKS when the server's AuthConfig.Algorithms
// is empty.
var DefaultJWKSAlgs = []string{"RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"}

// jwk is one key of a set as it is published.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// publicKey is a parsed key of the set.
type publicKey struct {
	kid string
	alg string // the JWK's alg; empty means any algorithm of its type
	key crypto.PublicKey
}

// fits reports whether the key may check a signature of alg: its type (and curve) must be
// the algorithm's, and its own alg, when it names one, must be alg. This is what stops a
// token from choosing how its key is used (an RSA key read as an HMAC secret, say).
func (k publicKey) fits(alg string) bool {
	a, ok := asymmetricAlgs[alg]
	if !ok || (k.alg != "" && k.alg != alg) {
		return false
	}
	switch pub := k.key.(type) {
	case *rsa.PublicKey:
		return a.kty == "RSA"
	case *ecdsa.PublicKey:
		return a.kty == "EC" && pub.Curve == a.curve
	case ed25519.PublicKey:
		return a.kty == "OKP"
	}
	return false
}

// parseJWK reads one key; keys of a type or curve the server does not use are reported as
// errors and skipped by the caller.
func parseJWK(k jwk) (publicKey, error) {
	b64 := base64.RawURLEncoding
	field := func(name, v string) ([]byte, error) {
		if v == "" {
			return nil, fmt.Errorf("has no %q", name)
		}
		b, err := b64.DecodeString(strings.TrimRight(v, "="))
		if err != nil {
			return nil, fmt.Errorf("%q is not base64url", name)
		}
		return b, nil
	}
	out := publicKey{kid: k.Kid, alg: k.Alg}
	switch k.Kty {
	case "RSA":
		n, err := field("n", k.N)
		if err != nil {
			return out, err
		}
		e, err := field("e", k.E)
		if err != nil {
			return out, err
		}
		if len(e) > 4 {
			return out, errors.New("has an exponent larger than 32 bits")
		}
		exp := int(new(big.Int).SetBytes(e).Int64())
		mod := new(big.Int).SetBytes(n)
		if mod.BitLen() < 2048 {
			return out, fmt.Errorf("is a %d-bit RSA key; at least 2048 bits are required", mod.BitLen())
		}
		if exp < 3 || exp%2 == 0 {
			return out, fmt.Errorf("has the RSA exponent %d", exp)
		}
		out.key = &rsa.PublicKey{N: mod, E: exp}
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return out, fmt.Errorf("is on the curve %q (supported: P-256, P-384, P-521)", k.Crv)
		}
		x, err := field("x", k.X)
		if err != nil {
			return out, err
		}
		y, err := field("y", k.Y)
		if err != nil {
			return out, err
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(x) != size || len(y) != size {
			return out, fmt.Errorf("has coordinates of %d and %d bytes; %s needs %d", len(x), len(y), k.Crv, size)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return out, fmt.Errorf("is not a point of %s: %v", k.Crv, err)
		}
		out.key = pub
	case "OKP":
		if k.Crv != "Ed25519" {
			return out, fmt.Errorf("is an OKP key on %q (supported: Ed25519)", k.Crv)
		}
		x, err := field("x", k.X)
		if err != nil {
			return out, err
		}
		if len(x) != ed25519.PublicKeySize {
			return out, fmt.Errorf("is an Ed25519 key of %d bytes", len(x))
		}
		out.key = ed25519.PublicKey(x)
	default:
		return out, fmt.Errorf("has the key type %q (supported: RSA, EC, OKP)", k.Kty)
	}
	return out, nil
}

// JWKS holds the keys of one JWKS URL. It is safe for concurrent use.
type JWKS struct {
	url      string
	client   *http.Client
	interval time.Duration // the least time between two fetches
	ttl      time.Duration // how long keys stay fresh without a max-age
	now      func() time.Time

	fetchMu sync.Mutex // one fetch at a time; waiters then use its result

	mu        sync.RWMutex
	keys      []publicKey
	loaded    bool      // a fetch has succeeded
	expires   time.Time // when the keys are stale (fetch again, keep using them meanwhile)
	attempted time.Time // when the last fetch started
	lastErr   error     // the last fetch's error, nil when it succeeded
	fetches   int       // fetches made, for tests and logs
}

func NewJWKS(url string, client *http.Client, interval, ttl time.Duration, now func() time.Time) *JWKS {
	if client == nil {
		client = &http.Client{Timeout: jwksFetchTimeout}
	}
	return &JWKS{url: url, client: client, interval: interval, ttl: ttl, now: now}
}

// key returns the keys that may check a token signed with alg whose header names kid (any
// fitting key when kid is empty). It fetches the set when it never has, when it is stale, or
// when no key fits and the last fetch is older than the refresh interval.
func (c *JWKS) key(ctx context.Context, kid, alg string) ([]publicKey, error) {
	if found, fresh := c.lookup(kid, alg); len(found) > 0 && fresh {
		return found, nil
	}
	c.refresh(ctx)
	found, _ := c.lookup(kid, alg)
	if len(found) > 0 {
		return found, nil
	}
	c.mu.RLock()
	loaded, lastErr := c.loaded, c.lastErr
	c.mu.RUnlock()
	if lastErr != nil {
		if !loaded {
			return nil, fmt.Errorf("%w: %v", ErrJWKSUnavailable, lastErr)
		}
		// Keys are known but not this one, and the provider cannot be asked about it now:
		// the token may be signed with a key it has just published.
		return nil, fmt.Errorf("%w (the token's key %q is not among the cached ones): %v", ErrJWKSUnavailable, kid, lastErr)
	}
	if kid == "" {
		return nil, fmt.Errorf("the JWKS has no key for %s", alg)
	}
	return nil, fmt.Errorf("the JWKS has no %s key with kid %q", alg, kid)
}

// lookup finds the keys fitting kid and alg, and says whether the set is fresh.
func (c *JWKS) lookup(kid, alg string) ([]publicKey, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []publicKey
	for _, k := range c.keys {
		if (kid == "" || k.kid == kid) && k.fits(alg) {
			out = append(out, k)
		}
	}
	return out, c.loaded && c.now().Before(c.expires)
}

// refresh fetches the set unless another fetch started less than the refresh interval ago.
// Concurrent callers wait for one fetch and share its result.
func (c *JWKS) refresh(ctx context.Context) {
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	c.mu.RLock()
	recent := !c.attempted.IsZero() && c.now().Sub(c.attempted) < c.interval
	c.mu.RUnlock()
	if recent {
		return
	}
	c.mu.Lock()
	c.attempted = c.now()
	c.fetches++
	c.mu.Unlock()
	// The fetch serves every waiter: it does not end with the request that started it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksFetchTimeout)
	defer cancel()
	keys, maxAge, err := c.fetch(fctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err
	if err != nil {
		return
	}
	c.keys, c.loaded = keys, true
	ttl := c.ttl
	if maxAge >= 0 {
		ttl = min(maxAge, jwksMaxAge)
	}
	c.expires = c.now().Add(ttl)
}

// fetch downloads and parses the set, and reads the max-age of its Cache-Control header (-1
// when there is none).
func (c *JWKS) fetch(ctx context.Context) ([]publicKey, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, -1, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, -1, fmt.Errorf("GET %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, -1, fmt.Errorf("GET %s: status %d", c.url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	if err != nil {
		return nil, -1, fmt.Errorf("GET %s: %w", c.url, err)
	}
	if len(body) > jwksMaxBytes {
		return nil, -1, fmt.Errorf("GET %s: the key set is larger than %d bytes", c.url, jwksMaxBytes)
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, -1, fmt.Errorf("GET %s: not a JWKS: %v", c.url, err)
	}
	var keys []publicKey
	var skipped []string
	for i, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pk, err := parseJWK(k)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d (kid %q) %v", i, k.Kid, err))
			continue
		}
		keys = append(keys, pk)
	}
	if len(keys) == 0 {
		return nil, -1, fmt.Errorf("GET %s: no usable signing key in the set (%s)", c.url, strings.Join(skipped, "; "))
	}
	return keys, maxAge(resp.Header.Get("Cache-Control")), nil
}

// maxAge reads max-age from a Cache-Control header: -1 when absent, 0 for no-store/no-cache.
func maxAge(cc string) time.Duration {
	age := time.Duration(-1)
	for _, d := range strings.Split(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(name) {
		case "no-store", "no-cache":
			return 0
		case "max-age":
			n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64)
			if err == nil && n >= 0 {
				age = time.Duration(min(n, int64(jwksMaxAge/time.Second))) * time.Second
			}
		}
	}
	return age
}

// verifyAsymmetric checks sig over signed with one of the keys.
func verifyAsymmetric(alg string, keys []publicKey, signed, sig []byte) bool {
	a := asymmetricAlgs[alg]
	var digest []byte
	if a.hash != 0 {
		h := a.hash.New()
		h.Write(signed)
		digest = h.Sum(nil)
	}
	for _, k := range keys {
		switch pub := k.key.(type) {
		case *rsa.PublicKey:
			var err error
			if a.pss {
				err = rsa.VerifyPSS(pub, a.hash, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
			} else {
				err = rsa.VerifyPKCS1v15(pub, a.hash, digest, sig)
			}
			if err == nil {
				return true
			}
		case *ecdsa.PublicKey:
			// JOSE signs ECDSA as r and s, each padded to the curve's size (not ASN.1).
			size := (pub.Curve.Params().BitSize + 7) / 8
			if len(sig) != 2*size {
				continue
			}
			r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
			if ecdsa.Verify(pub, digest, r, s) {
				return true
			}
		case ed25519.PublicKey:
			if ed25519.Verify(pub, signed, sig) {
				return true
			}
		}
	}
	return false
}
