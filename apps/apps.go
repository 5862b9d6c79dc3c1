// Package apps is the registry of the applications trellis serves: cmd/trellis hands [All] to
// the trellis command, so that `trellis serve`, `trellis run` and `trellis graph` offer them.
// A new application is a package under apps/ laid out as docs/apps.md ("Layout") says, with its
// App() server.App (and New(Options) for other options), and one line here.
package apps

import (
	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/apps/rehab"
	"github.com/trellis-go/trellis/apps/vesper"
	"github.com/trellis-go/trellis/server"
)

// All returns every application, in the order lists show them.
func All() []server.App {
	return []server.App{
		example.App(),
		vesper.App(),
		rehab.App(),
		realty.App(),
		listforge.App(),
		analyst.App(),
	}
}
