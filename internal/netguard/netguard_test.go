package netguard_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/internal/netguard"
)

func TestCheck(t *testing.T) {
	for addr, reason := range map[string]string{
		"127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "172.31.255.255": "private", "192.168.1.1": "private",
		"169.254.169.254": "link-local", "fe80::1": "link-local", "fd00::1": "private",
		"0.0.0.0": "unspecified", "::": "unspecified", "100.64.0.1": "shared", "224.0.0.1": "multicast",
	} {
		err := netguard.Policy{}.Check(netip.MustParseAddr(addr))
		var be *netguard.BlockedError
		if !errors.As(err, &be) || !errors.Is(err, netguard.ErrBlocked) || !strings.Contains(be.Reason, reason) {
			t.Errorf("%s: %v, want blocked as %s", addr, err, reason)
		}
	}
	for _, addr := range []string{"8.8.8.8", "1.1.1.1", "172.32.0.1", "2606:4700::1111", "93.184.216.34"} {
		if err := (netguard.Policy{}).Check(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("%s is public: %v", addr, err)
		}
	}
	allow := netguard.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.8.0.0/16")}}
	if allow.Check(netip.MustParseAddr("10.8.1.1")) != nil || allow.Check(netip.MustParseAddr("10.9.1.1")) == nil {
		t.Error("Allow: 10.8.0.0/16 should be allowed and 10.9.1.1 not")
	}
	if (netguard.Policy{AllowPrivate: true}).Check(netip.MustParseAddr("127.0.0.1")) != nil {
		t.Error("AllowPrivate refuses loopback")
	}
}

// The transport refuses to connect to a local server, by IP or by a name that resolves to it,
// and connects when the policy allows it.
func TestTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for _, url := range []string{srv.URL, "http://localhost:" + port} {
		_, err := (&http.Client{Transport: netguard.Policy{}.Transport()}).Get(url)
		if !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("GET %s: %v, want ErrBlocked", url, err)
		}
	}
	resp, err := (&http.Client{Transport: netguard.Policy{AllowPrivate: true}.Transport()}).Get(srv.URL)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("allowed: %v", err)
	}
	resp.Body.Close()
}
