// Package cli is the trellis command. cmd/trellis builds a [Program] from the application
// registry (package apps) and the web UI (package ui) and calls [Program.Run]; this package
// imports no application, so it is tested with the applications a test chooses.
//
// The subcommands, each in a file of its own:
//
//	serve    the Agent Protocol server with the applications and the web UI (serve.go)
//	chat     a terminal client for an assistant on a server: streamed answers, tool calls,
//	         approvals, sessions (chat*.go)
//	run      one run of an assistant on a JSON input, its stream printed (run.go)
//	graph    an assistant's graph as Mermaid (graph.go)
//	example  the example agent on a question, with no server (example.go)
//	ingest   documents into the long-term memory store for retrieval (ingest.go)
//	migrate  the databases' schemas brought up to date (migrate.go)
//	version  the version
//
// Each file registers its subcommand with a summary for the usage text; [Run] picks the
// subcommand by the first argument and hands it the rest in an [Env]. Storage flags shared by
// serve, run and migrate are in storage.go. A mistake in the arguments is a [UsageError] (exit
// status 2, see [ExitCode]).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/server"
)

// Env is what a subcommand may use: its arguments, the standard streams, and the program's
// applications.
type Env struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Apps are the applications serve runs and run and graph offer.
	Apps []server.App
	// UI is the web UI serve offers at / (nil: none).
	UI http.Handler
}

// Program is the trellis command with what it serves: cmd/trellis builds one from the
// application registry (package apps) and the web UI (package ui), so that this package imports
// no application.
type Program struct {
	// Apps are the applications `trellis serve` runs and `trellis run` and `trellis graph`
	// offer, in the order lists show them.
	Apps []server.App
	// UI serves the web UI at / and /ui/; nil serves none.
	UI http.Handler
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env Env) error
}

// commands holds every subcommand by name; each file of this package registers its own in an
// init function, so adding a command touches no other file.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, env Env) error) {
	commands[name] = command{summary: summary, run: run}
}

// UsageError is a mistake in how the command was called; it exits with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ExitCode maps an error from Run to the process's exit status.
func ExitCode(err error) int {
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// Run runs the trellis command with args (without the program name) and no applications; see
// [Program.Run].
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return Program{}.Run(ctx, args, stdin, stdout, stderr)
}

// Run runs the trellis command with args (without the program name).
func (p Program) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return &UsageError{Msg: fmt.Sprintf("unknown command %q (run `trellis help` for the list)", args[0])}
	}
	return cmd.run(ctx, Env{Args: args[1:], Stdin: stdin, Stdout: stdout, Stderr: stderr, Apps: p.Apps, UI: p.UI})
}

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "trellis: stateful, multi-agent LLM applications in Go.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: trellis COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %s%s  %s\n", n, strings.Repeat(" ", width-len(n)), commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `trellis COMMAND -h` for a command's flags.")
}
