package model

import (
	"net"
	"net/http"
	"time"
)

// DefaultConnectTimeout bounds how long a provider waits to open a connection (TCP and TLS) to
// its API when no timeout is configured: a host that does not answer fails in seconds, and
// [Resilient] can try again, instead of waiting for the request's whole timeout.
const DefaultConnectTimeout = 5 * time.Second

// NewHTTPClient returns the HTTP client the providers use when none is given: the default
// transport's settings (proxy from the environment, HTTP/2, keep-alive) with connect bounding
// dialling and the TLS handshake. connect <= 0 means [DefaultConnectTimeout]. The client sets no
// overall timeout: a streamed answer may rightly take minutes, and each request carries its own.
func NewHTTPClient(connect time.Duration) *http.Client {
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	return &http.Client{Transport: t}
}
