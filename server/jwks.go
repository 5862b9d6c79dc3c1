package server

import (
	"time"

	"github.com/trellis-go/trellis/server/internal/auth"
)

// A JWKS (JSON Web Key Set, RFC 7517) is where an identity provider publishes the public keys
// its tokens are signed with. The server fetches it from AuthConfig.JWKSURL, keeps the keys,
// and fetches it again when a token names a key it does not know (the provider rotated its
// keys) or when the set's Cache-Control max-age has passed, but never more often than once per
// AuthConfig.JWKSRefreshInterval: a flood of tokens with made-up key IDs costs the provider one
// request per interval, not one per token. The fetching and caching are in
// server/internal/auth.

// Defaults of the JWKS settings of [AuthConfig].
const (
	DefaultJWKSRefreshInterval = 30 * time.Second
	DefaultJWKSCacheTTL        = time.Hour
)

// ErrJWKSUnavailable: the key set cannot be fetched, so a token signed with a key the server
// does not have yet cannot be checked. Requests answer 503: the credential may be good.
var ErrJWKSUnavailable = auth.ErrJWKSUnavailable
