// Command realtychat is the realty app's REPL: it talks to a running trellis server
// (TRELLIS_URL, default http://127.0.0.1:2024; TRELLIS_API_KEY when it needs one), offers to
// resume the last session, prints the session ID, streams answers and shows listings, details
// and follow-up hints. quit, exit, Ctrl-D, Ctrl-C or a lost connection end it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/trellis-go/trellis/apps/realty"
)

func main() {
	url := os.Getenv("TRELLIS_URL")
	if url == "" {
		url = "http://127.0.0.1:2024"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := realty.Chat(ctx, realty.ChatOptions{URL: url, APIKey: os.Getenv("TRELLIS_API_KEY"), In: os.Stdin, Out: os.Stdout})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
