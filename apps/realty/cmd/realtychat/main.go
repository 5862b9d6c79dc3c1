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
	"os"
	"os/signal"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/cli"
)

func main() {
	fs := flag.NewFlagSet("realtychat", flag.ContinueOnError)
	url := fs.String("url", cli.EnvOr("URL", "http://127.0.0.1:2024"), "trellis server to talk to (TRELLIS_URL)")
	apiKey := fs.String("api-key", cli.EnvOr("API_KEY", ""), "API key the server asks for, if any (TRELLIS_API_KEY)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "realtychat takes no arguments, got %q (use -url and -api-key)\n", fs.Args())
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := realty.Chat(ctx, realty.ChatOptions{URL: *url, APIKey: *apiKey, In: os.Stdin, Out: os.Stdout})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
