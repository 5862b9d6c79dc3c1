// Package servertest starts trellis servers for tests: an application's own tests, the command
// line's and the web UI's drive a real server over loopback HTTP, and each needs the same few
// lines to start one and to stop it when the test ends.
package servertest

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/trellis-go/trellis/server"
)

// Server is a trellis server serving on a loopback port.
type Server struct {
	*server.Server
	// URL is the base URL of its API, such as http://127.0.0.1:38421.
	URL string
	// HTTP is the test HTTP server in front of it.
	HTTP *httptest.Server
}

// Start starts a server with cfg and stops it when the test ends (open client connections are
// closed first, so a test's lingering stream does not hold the stop). Unless cfg says otherwise,
// the data directory is the test's own (when cfg.DatabaseURL is empty) and the log is discarded.
// A configuration the server refuses fails the test.
func Start(tb testing.TB, cfg server.Config) *Server {
	tb.Helper()
	if cfg.DataDir == "" && cfg.DatabaseURL == "" {
		cfg.DataDir = tb.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := server.New(cfg)
	if err != nil {
		tb.Fatalf("servertest: server.New: %v", err)
	}
	hs := httptest.NewServer(s.Handler())
	tb.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		s.Close()
	})
	return &Server{Server: s, URL: hs.URL, HTTP: hs}
}
