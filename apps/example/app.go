// Package example serves the example agent of examples/react as a trellis application: the
// assistant "example", a ReAct agent with a unit converter and a world clock, and "interview",
// which interrupts from inside a node.
//
// Its files follow the apps' layout (docs/apps.md): app.go (this file: [Options], [App], [New]),
// graph.go (the interview graph; the ReAct graph and its tools are examples/react's).
package example

import (
	"context"

	"github.com/trellis-go/trellis/examples/react"
	"github.com/trellis-go/trellis/server"
)

// Options configure [New]. The example has no settings of its own; the zero value is the app
// [App] returns.
type Options struct{}

// App is the example as a trellis application, on the server's default model (the offline one
// when none is configured).
func App() server.App { return New(Options{}) }

// New is the example with opts.
func New(opts Options) server.App {
	_ = opts
	return server.App{
		Name:        "example",
		Description: "A ReAct agent with a unit converter and a world clock.",
		Build: func(_ context.Context, d server.AppDeps) (*server.AppParts, error) {
			// The server wraps the model for the run's spans and its token budget.
			co := d.Compile
			co.ConfigType = exampleConfigType
			g, err := react.New(d.Models.Default(), co)
			if err != nil {
				return nil, err
			}
			iv, err := Interview(d.Compile)
			if err != nil {
				return nil, err
			}
			return &server.AppParts{Graphs: []server.AppGraph{{ID: "example", Graph: g.Runnable(),
				Description: "A ReAct agent with a unit converter and a world clock, on the offline model unless a model is configured."},
				{ID: "interview", Graph: iv.Runnable(),
					Description: "Asks your name from inside a node (an interrupt: resume with Command({resume: name})) and greets you."}}}, nil
		},
	}
}
