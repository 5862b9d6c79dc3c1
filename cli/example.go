package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/agent/react"
	example "github.com/trellis-go/trellis/examples/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
)

func init() {
	register("example", "run the example agent on a question and print its stream", runExample)
}

func runExample(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	modes := fs.String("modes", "updates", "stream modes to print, comma-separated")
	if err := fs.Parse(env.Args); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	question := strings.Join(fs.Args(), " ")
	if question == "" {
		question = "Convert 42 km to miles"
	}
	var ms []graph.StreamMode
	for _, s := range strings.Split(*modes, ",") {
		m, err := graph.ParseStreamMode(strings.TrimSpace(s))
		if err != nil {
			return &UsageError{Msg: err.Error()}
		}
		ms = append(ms, m)
	}
	g, err := example.New(offline.New(nil), graph.CompileOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "question: %s\n", question)
	in := react.State{Messages: []message.Message{message.User(question)}}
	for ev, err := range g.Stream(ctx, in, graph.WithStreamModes(ms...)) {
		if err != nil {
			var ie *graph.InterruptedError
			if errors.As(err, &ie) {
				fmt.Fprintf(env.Stdout, "paused: %v\n", ie)
				return nil
			}
			return err
		}
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return err
		}
		node := ev.Node
		if node == "" {
			node = "-"
		}
		fmt.Fprintf(env.Stdout, "[%s] step %d %s: %s\n", ev.Mode, ev.Step, node, data)
	}
	return nil
}
