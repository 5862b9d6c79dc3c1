// Command trellis runs trellis: the server with its applications, and the tools around it.
// Everything it does lives in package cli, so that it can be tested; this file only names what
// it serves: the applications of package apps and the web UI of package ui.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/trellis-go/trellis/apps"
	"github.com/trellis-go/trellis/cli"
	"github.com/trellis-go/trellis/ui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.Program{Apps: apps.All(), UI: ui.Handler()}.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trellis:", err)
		os.Exit(cli.ExitCode(err))
	}
}
