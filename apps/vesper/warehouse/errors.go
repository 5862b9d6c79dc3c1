package warehouse

import (
	"errors"
	"fmt"
)

var (
	// ErrNoTenant is returned by Query when no tenant is given: every query
	// runs for exactly one tenant.
	ErrNoTenant = errors.New("warehouse: no tenant given; every query runs for one tenant")
	// ErrTimeout is returned when a query runs past the executor's timeout.
	ErrTimeout = errors.New("warehouse: query timed out")
	// ErrConfig is wrapped by errors about a Config that cannot work.
	ErrConfig = errors.New("warehouse: bad config")
)

// QueryError reports a query the database refused or failed to run.
type QueryError struct {
	Dialect Dialect
	Err     error
	Hint    string
}

func (e *QueryError) Error() string {
	msg := fmt.Sprintf("warehouse: %s query failed: %v", e.Dialect, e.Err)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *QueryError) Unwrap() error { return e.Err }

// LoadError reports bad input data: a CSV file with a missing column or a
// value of the wrong type. Line is 1-based and counts the header.
type LoadError struct {
	View   string
	File   string
	Line   int
	Column string
	Err    error
}

func (e *LoadError) Error() string {
	where := e.View
	if e.File != "" {
		where = e.File
	}
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Line)
	}
	if e.Column != "" {
		where += " column " + e.Column
	}
	return fmt.Sprintf("warehouse: load %s: %v", where, e.Err)
}

func (e *LoadError) Unwrap() error { return e.Err }
