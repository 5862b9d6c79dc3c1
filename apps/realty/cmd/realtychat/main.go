// Command realtychat is the realty app's REPL: it talks to a running trellis server (-url,
// default TRELLIS_URL or http://127.0.0.1:2024; -api-key, default TRELLIS_API_KEY, when it needs
// one), offers to resume the last session, prints the session ID, streams answers and shows
// listings, details and follow-up hints. quit, exit, Ctrl-D, Ctrl-C or a lost connection end it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command with its arguments and streams: 0 when the chat ended as the user asked, 1
// when it failed, 2 for bad arguments.
func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("realtychat", flag.ContinueOnError)
	fs.SetOutput(errOut)
	url := fs.String("url", cli.EnvOr("URL", "http://127.0.0.1:2024"), "trellis server to talk to (TRELLIS_URL)")
	apiKey := fs.String("api-key", cli.EnvOr("API_KEY", ""), "API key the server asks for, if any (TRELLIS_API_KEY)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "realtychat takes no arguments, got %q (use -url and -api-key)\n", fs.Args())
		return 2
	}
	err := realty.Chat(ctx, realty.ChatOptions{URL: *url, APIKey: *apiKey, In: in, Out: out})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(errOut, err)
		return 1
	}
	return 0
}
