package cli

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/trellis-go/trellis/server"
)

// newLogger is the server's log: readable text lines for a person at a terminal, JSON lines for
// a collector (the log is not a terminal), or as --log-format says.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "":
		if isTerminal(w) {
			return slog.New(slog.NewTextHandler(w, opts)), nil
		}
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, &UsageError{Msg: fmt.Sprintf("--log-format %q: use text or json (or leave it out: text at a terminal, json otherwise)", format)}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// summary is what start-up ends with.
type summary struct {
	URL         string
	Dev         bool
	Database    string
	Model, Fast string // the default and fast roles' model specs
	Apps        []server.AppInfo
	UI          bool
}

// startSummary is the one block `trellis serve` prints when it is ready: where it listens, the
// apps and their pages, the database and the model in use.
func startSummary(s summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "trellis is ready on %s\n", s.URL)
	if s.Dev {
		b.WriteString("  mode:      dev (no authentication, loopback only)\n")
	}
	if s.UI {
		fmt.Fprintf(&b, "  web UI:    %s/\n", s.URL)
	}
	fmt.Fprintf(&b, "  database:  %s\n", s.Database)
	m := s.Model
	if m == "" {
		m = "offline"
	}
	if m == "offline" {
		m += " (rule-based, no API key needed; set TRELLIS_MODEL for a provider's model)"
	}
	fmt.Fprintf(&b, "  model:     %s\n", m)
	if s.Fast != "" && s.Fast != s.Model {
		fmt.Fprintf(&b, "  fast:      %s\n", s.Fast)
	}
	if len(s.Apps) == 0 {
		b.WriteString("  apps:      none\n")
	} else {
		b.WriteString("  apps:\n")
	}
	for _, a := range s.Apps {
		var where []string
		if s.UI {
			where = append(where, s.URL+"/ui/apps/"+a.Name)
		}
		if a.HasRoutes {
			where = append(where, "API "+s.URL+"/apps/"+a.Name+"/")
		}
		if len(a.Graphs) > 0 {
			where = append(where, "assistants "+strings.Join(a.Graphs, ", "))
		}
		fmt.Fprintf(&b, "    %-10s %s\n", a.Name, strings.Join(where, "; "))
	}
	fmt.Fprintf(&b, "  health:    %s/ok\n", s.URL)
	return b.String()
}

// redactURL is a database URL without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the configured URL"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// appSettingsHelp lists every application's own settings, as `trellis serve --help` ends.
func appSettingsHelp(apps []server.App) string {
	var b strings.Builder
	b.WriteString("\nApplication settings: TRELLIS_APP_<APP>_<KEY> variables, or {\"<app>\": {\"<key>\": \"<value>\"}} in --app-config:\n")
	for _, a := range apps {
		if len(a.Settings) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", a.Name)
		for _, s := range a.Settings {
			fmt.Fprintf(&b, "    %s\n        %s\n", server.EnvName(a.Name, s.Key), s.Doc)
		}
	}
	return b.String()
}
