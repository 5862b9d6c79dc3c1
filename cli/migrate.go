package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/trellis-go/trellis/checkpoint/pgsaver"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
)

func init() {
	register("migrate", "bring the databases' schemas up to date (also done on start)", runMigrate)
}

// runMigrate applies the migrations of the checkpoint saver and the store. Opening each one
// migrates it; the command exists so that an operator can do it ahead of a deploy.
func runMigrate(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var st storage
	st.flags(fs)
	if err := fs.Parse(env.Args); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if st.databaseURL != "" {
		saver, err := pgsaver.Open(ctx, st.databaseURL, nil)
		if err != nil {
			return fmt.Errorf("migrate: checkpoints: %w", err)
		}
		saver.Close()
		fmt.Fprintf(env.Stdout, "checkpoints: postgres schema at version %d\n", pgsaver.SchemaVersion)
	} else {
		path, err := st.sqlitePath("checkpoints.db")
		if err != nil {
			return err
		}
		saver, err := sqlitesaver.Open(ctx, path, nil)
		if err != nil {
			return fmt.Errorf("migrate: checkpoints: %w", err)
		}
		saver.Close()
		fmt.Fprintf(env.Stdout, "checkpoints: %s at schema version %d\n", path, sqlitesaver.SchemaVersion)
	}
	_, closeStore, where, err := st.openStore(ctx)
	if err != nil {
		return fmt.Errorf("migrate: store: %w", err)
	}
	if err := closeStore(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "store: %s migrated\n", where)
	return nil
}
