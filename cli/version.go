package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is set at build time with -ldflags "-X github.com/trellis-go/trellis/cli.Version=v1.2.3";
// otherwise it comes from the module's build information.
var Version = ""

func init() {
	register("version", "print the version of trellis", func(_ context.Context, env Env) error {
		v := Version
		if v == "" {
			v = "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
		}
		fmt.Fprintf(env.Stdout, "trellis %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	})
}
