package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error a store returns for one of these causes matches it with errors.Is.
var (
	// ErrNotFound: no live item has that namespace and key.
	ErrNotFound = errors.New("store: item not found")
	// ErrInvalidNamespace: a namespace or one of its labels is empty, too long or has a
	// forbidden character.
	ErrInvalidNamespace = errors.New("store: invalid namespace")
	// ErrInvalidKey: a key is empty or too long.
	ErrInvalidKey = errors.New("store: invalid key")
	// ErrValueTooLarge: a value's JSON is larger than Config.MaxValueBytes.
	ErrValueTooLarge = errors.New("store: value too large")
	// ErrInvalidValue: a value cannot be encoded as JSON, or a request field is out of range.
	ErrInvalidValue = errors.New("store: invalid value")
	// ErrInvalidFilter: a search filter uses an unknown operator or a malformed operand.
	ErrInvalidFilter = errors.New("store: invalid filter")
	// ErrDimension: a vector's length is not the index's dimension.
	ErrDimension = errors.New("store: vector has the wrong dimension")
	// ErrUnavailable: the database cannot be reached.
	ErrUnavailable = errors.New("store: database unavailable")
	// ErrReadOnly: the database refuses writes.
	ErrReadOnly = errors.New("store: database is read-only")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: store is closed")
	// ErrEmbedding: the embedder failed or returned the wrong number of vectors.
	ErrEmbedding = errors.New("store: embedding failed")
)

// InputError says which part of a request was wrong and what to do instead. It matches one of
// the sentinels above through Unwrap.
type InputError struct {
	Op      string // "put", "get", "search", ...
	Field   string // "namespace", "key", "value", "filter", ...
	Problem string
	Hint    string
	Kind    error // the sentinel
}

func (e *InputError) Error() string {
	s := fmt.Sprintf("store: %s: %s %s", e.Op, e.Field, e.Problem)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the sentinel this error matches.
func (e *InputError) Unwrap() error { return e.Kind }

// ConfigError says which field of a configuration is wrong.
type ConfigError struct {
	Field   string
	Problem string
	Hint    string
}

func (e *ConfigError) Error() string {
	s := "store: config: " + e.Field + " " + e.Problem
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// BackendError is a failure of the database under a store: it names the backend and the
// operation, carries the driver's error, matches ErrUnavailable or ErrReadOnly when that is the
// cause, and hints at the fix.
type BackendError struct {
	Backend string // "sqlite", "postgres"
	Op      string
	Kind    error // ErrUnavailable, ErrReadOnly, or nil
	Hint    string
	Err     error
}

func (e *BackendError) Error() string {
	s := fmt.Sprintf("store: %s: %s: %v", e.Backend, e.Op, e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the sentinel (when known) and the driver's error.
func (e *BackendError) Unwrap() []error {
	if e.Kind != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Err}
}

func inputErr(op, field, problem, hint string, kind error) error {
	return &InputError{Op: op, Field: field, Problem: problem, Hint: hint, Kind: kind}
}
