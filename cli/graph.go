package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
)

func init() {
	register("graph", "print an assistant's graph as Mermaid", runGraph)
}

func runGraph(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	xray := fs.Bool("xray", false, "draw subgraphs inside their nodes")
	if err := fs.Parse(env.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() != 1 {
		return &UsageError{Msg: "usage: trellis graph [--xray] ASSISTANT"}
	}
	g, err := localGraph(ctx, env, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprint(env.Stdout, g.Mermaid(*xray))
	return nil
}
