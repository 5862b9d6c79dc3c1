// Package example serves the example agent of examples/react as a trellis application: the
// assistant "example", a ReAct agent with a unit converter and a world clock, and "interview",
// which interrupts from inside a node.
package example

import (
	"context"

	"github.com/trellis-go/trellis/examples/react"
	"github.com/trellis-go/trellis/server"
)

// App is the example as a trellis application, on the server's default model (the offline one
// when none is configured).
func App() server.App {
	return server.App{
		Name:        "example",
		Description: "A ReAct agent with a unit converter and a world clock.",
		Build: func(_ context.Context, d server.AppDeps) (*server.AppParts, error) {
			// The server wraps the model for the run's spans and its token budget.
			g, err := react.New(d.Models.Default(), d.Compile)
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
