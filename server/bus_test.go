package server

import (
	"context"
	"database/sql"
	"sync"
	"testing"
)

// TestBusHandlersWhileNotified starts servers on Postgres while another replica's "done" and
// "cancel" messages keep arriving on the bus: the listener starts before the runner exists, so
// what it calls must be set without a race (go test -race reported one in CI).
func TestBusHandlersWhileNotified(t *testing.T) {
	t.Parallel()
	url := pgURL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			db.ExecContext(ctx, `SELECT pg_notify($1, '{"k":"done","r":"no-such-run","t":"no-such-thread"}'), pg_notify($1, '{"k":"cancel","r":"no-such-run","a":"interrupt"}')`, busChannel)
		}
	}()
	for range 3 {
		setup(t, setupOpts{cfg: Config{DatabaseURL: url}}).srv.Close()
	}
	cancel()
	wg.Wait()
}
