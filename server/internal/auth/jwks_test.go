package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The JWKS tests against a fake identity provider, through the server's AuthConfig, are in
// package server (jwks_test.go); these test the parts below it.

// ecJWK publishes an EC key as a JWK.
func ecJWK(k *ecdsa.PrivateKey) map[string]any {
	b64 := base64.RawURLEncoding
	raw, _ := k.PublicKey.Bytes()
	size := (len(raw) - 1) / 2
	return map[string]any{"kid": "", "use": "sig", "kty": "EC", "crv": k.Curve.Params().Name,
		"x": b64.EncodeToString(raw[1 : 1+size]), "y": b64.EncodeToString(raw[1+size:])}
}

func TestMaxAge(t *testing.T) {
	if got := maxAge("public, max-age=60"); got != time.Minute {
		t.Errorf("max-age=60: %v", got)
	}
	if got := maxAge("no-cache"); got != 0 {
		t.Errorf("no-cache: %v", got)
	}
	if got := maxAge("max-age=999999999"); got != jwksMaxAge {
		t.Errorf("huge max-age: %v", got)
	}
	if got := maxAge("private"); got != -1 {
		t.Errorf("no max-age: %v", got)
	}
}

func TestAlgorithmKinds(t *testing.T) {
	if !IsHMAC("HS256") || IsHMAC("RS256") || !IsAsymmetric("EdDSA") || IsAsymmetric("none") || IsHMAC("none") {
		t.Fatal("HS256 is HMAC, RS256 and EdDSA are asymmetric, none is neither")
	}
}

func TestParseJWK(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	b64 := base64.RawURLEncoding
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good := ecJWK(p256)
	offCurve := map[string]any{}
	for k, v := range good {
		offCurve[k] = v
	}
	offCurve["y"] = b64.EncodeToString(make([]byte, 32))
	bad := []map[string]any{
		{"kty": "RSA", "n": b64.EncodeToString(small.N.Bytes()), "e": "AQAB"},
		offCurve,
		{"kty": "EC", "crv": "secp256k1", "x": "AA", "y": "AA"},
		{"kty": "OKP", "crv": "X25519", "x": b64.EncodeToString(make([]byte, 32))},
		{"kty": "oct", "k": "c2VjcmV0"},
		{"kty": "RSA", "n": "!!", "e": "AQAB"},
	}
	for i, m := range bad {
		raw, _ := json.Marshal(m)
		var k jwk
		json.Unmarshal(raw, &k)
		if _, err := parseJWK(k); err == nil {
			t.Errorf("bad key %d (%s) parsed", i, raw)
		}
	}
	raw, _ := json.Marshal(good)
	var k jwk
	json.Unmarshal(raw, &k)
	if pk, err := parseJWK(k); err != nil || !pk.fits("ES256") || pk.fits("ES384") || pk.fits("RS256") {
		t.Errorf("good P-256 key: %v", err)
	}
	// A set of only unusable keys is an error naming them; a usable key beside them loads.
	serve := func(keys []map[string]any) *JWKS {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(map[string]any{"keys": keys})
		}))
		t.Cleanup(srv.Close)
		return NewJWKS(srv.URL, nil, time.Second, time.Hour, time.Now)
	}
	c := serve(bad)
	if _, _, err := c.fetch(t.Context()); err == nil || !strings.Contains(err.Error(), "no usable signing key") {
		t.Fatalf("set of bad keys: %v", err)
	}
	c = serve(append(bad, good))
	if keys, _, err := c.fetch(t.Context()); err != nil || len(keys) != 1 {
		t.Fatalf("set with one good key: %d keys, %v", len(keys), err)
	}
}
