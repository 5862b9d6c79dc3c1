package server

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
)

// countingDriver is a database/sql driver around another that has a sqlCounter count each
// statement executed (a prepared statement each time it runs, a transaction's begin and commit
// or rollback as one each); each is a call into SQLite, as each is a round trip on Postgres.
type countingDriver struct {
	inner driver.Driver
	c     func() *sqlCounter
}

// countingSQLite is the driver name under which the SQLite driver counts into sqliteCounter.
const countingSQLite = "sqlite-counting"

var (
	sqliteCounterMu sync.Mutex
	sqliteCounter   *sqlCounter
	registerOnce    sync.Once
)

// useCountingSQLite has servers opened from now on count their SQLite statements into c (nil:
// stop counting) and returns the driver name to set sqliteDriver to.
func useCountingSQLite(c *sqlCounter) string {
	registerOnce.Do(func() {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			panic(err)
		}
		inner := db.Driver()
		db.Close()
		sql.Register(countingSQLite, &countingDriver{inner: inner, c: func() *sqlCounter {
			sqliteCounterMu.Lock()
			defer sqliteCounterMu.Unlock()
			return sqliteCounter
		}})
	})
	sqliteCounterMu.Lock()
	sqliteCounter = c
	sqliteCounterMu.Unlock()
	return countingSQLite
}

func (d *countingDriver) count(text string) {
	if c := d.c(); c != nil {
		c.count(oneLine(text), true)
	}
}

func (d *countingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingConn{inner: c, d: d}, nil
}

type countingConn struct {
	inner driver.Conn
	d     *countingDriver
}

func (c *countingConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c *countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	var s driver.Stmt
	var err error
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		s, err = p.PrepareContext(ctx, q)
	} else {
		s, err = c.inner.Prepare(q)
	}
	if err != nil {
		return nil, err
	}
	return &countingStmt{inner: s, text: q, d: c.d}, nil
}

func (c *countingConn) Close() error { return c.inner.Close() }

func (c *countingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.d.count("begin")
	var tx driver.Tx
	var err error
	if b, ok := c.inner.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		//lint:ignore SA1019 a driver without BeginTx has nothing newer
		tx, err = c.inner.Begin()
	}
	if err != nil {
		return nil, err
	}
	return &countingTx{inner: tx, d: c.d}, nil
}

func (c *countingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.d.count(q)
	return e.ExecContext(ctx, q, args)
}

func (c *countingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	e, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.d.count(q)
	return e.QueryContext(ctx, q, args)
}

func (c *countingConn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *countingConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type countingTx struct {
	inner driver.Tx
	d     *countingDriver
}

func (t *countingTx) Commit() error   { t.d.count("commit"); return t.inner.Commit() }
func (t *countingTx) Rollback() error { t.d.count("rollback"); return t.inner.Rollback() }

type countingStmt struct {
	inner driver.Stmt
	text  string
	d     *countingDriver
}

func (s *countingStmt) Close() error  { return s.inner.Close() }
func (s *countingStmt) NumInput() int { return s.inner.NumInput() }

func (s *countingStmt) Exec(args []driver.Value) (driver.Result, error) {
	return nil, errors.New("countingStmt: Exec without a context is not used")
}

func (s *countingStmt) Query(args []driver.Value) (driver.Rows, error) {
	return nil, errors.New("countingStmt: Query without a context is not used")
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	e, ok := s.inner.(driver.StmtExecContext)
	if !ok {
		return nil, errors.New("countingStmt: the driver's statement has no ExecContext")
	}
	s.d.count(s.text)
	return e.ExecContext(ctx, args)
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.inner.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("countingStmt: the driver's statement has no QueryContext")
	}
	s.d.count(s.text)
	return q.QueryContext(ctx, args)
}

func (s *countingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}
