// Package netguard keeps outbound requests away from the machine and its network: a request to a
// loopback, private, link-local (cloud metadata at 169.254.169.254 included), unspecified,
// shared (CGNAT) or multicast address is refused unless the policy allows it. The check runs
// when a connection is dialled, on the address actually dialled, so a hostname that resolves (or
// re-resolves) to such an address is refused too.
//
//	client := &http.Client{Transport: netguard.Policy{}.Transport()}
//	_, err := client.Get("http://169.254.169.254/latest/meta-data/") // refused: *netguard.BlockedError
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrBlocked is wrapped by every *BlockedError.
var ErrBlocked = errors.New("netguard: address not allowed")

// BlockedError names the address refused and why.
type BlockedError struct {
	Addr   netip.Addr
	Reason string // "loopback", "private", "link-local", ...
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("netguard: %s is a %s address; outbound requests may not reach it (allow it in the configuration if it is meant)", e.Addr, e.Reason)
}

func (e *BlockedError) Unwrap() error { return ErrBlocked }

// Policy says which addresses outbound requests may reach. The zero value allows only public
// addresses.
type Policy struct {
	// AllowPrivate allows every address (tests, and an operator's explicit choice).
	AllowPrivate bool
	// Allow lists ranges allowed although they are not public (a partner's VPN range, say).
	Allow []netip.Prefix
}

var blocked = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Check returns a *BlockedError when addr may not be reached.
func (p Policy) Check(addr netip.Addr) error {
	if p.AllowPrivate {
		return nil
	}
	addr = addr.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	for _, a := range p.Allow {
		if a.Contains(addr) {
			return nil
		}
	}
	for _, b := range blocked {
		if b.prefix.Contains(addr) {
			return &BlockedError{Addr: addr, Reason: b.reason}
		}
	}
	return nil
}

// Control is a net.Dialer Control function that applies the policy to the address being
// dialled.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: cannot read the address %q: %w", address, err)
	}
	return p.Check(ap.Addr())
}

// Dialer returns a dialer that applies the policy.
func (p Policy) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.Control}
}

// Transport returns an http.Transport like http.DefaultTransport's whose connections obey the
// policy. Proxies from the environment are not used: a proxy would dial for us, unchecked.
func (p Policy) Transport() *http.Transport {
	d := p.Dialer()
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
