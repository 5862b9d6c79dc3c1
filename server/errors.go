package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors; every *APIError of the matching kind is errors.Is one of them.
var (
	// ErrNotFound: no such assistant, thread, run or item for the caller's tenant.
	ErrNotFound = errors.New("server: not found")
	// ErrBusy: the thread is running a run and the multitask strategy is reject.
	ErrBusy = errors.New("server: thread is busy")
	// ErrBadRequest: the request is malformed.
	ErrBadRequest = errors.New("server: bad request")
	// ErrUnauthorized: no valid credentials.
	ErrUnauthorized = errors.New("server: unauthorized")
	// ErrShuttingDown: the server no longer takes runs.
	ErrShuttingDown = errors.New("server: shutting down")
	// ErrTransient: wrap it in a node's error to have the server retry the run from its last
	// checkpoint (up to Config.MaxRunAttempts, with backoff) instead of failing it.
	ErrTransient = errors.New("server: transient failure")
)

// APIError is an error with its HTTP status. Its JSON body is {"detail": Message}, as the
// LangGraph API answers, plus "hint" when there is one.
type APIError struct {
	Status  int
	Message string
	Hint    string
	kind    error
}

func (e *APIError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("server: %s (%s)", e.Message, e.Hint)
	}
	return "server: " + e.Message
}

// Is matches the sentinel of the error's kind.
func (e *APIError) Is(target error) bool { return e.kind != nil && target == e.kind }

func notFound(what, id string) *APIError {
	return &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("%s %q not found", what, id), kind: ErrNotFound}
}

func badRequest(hint, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Hint: hint, kind: ErrBadRequest}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	var ae *APIError
	if !errors.As(err, &ae) {
		switch {
		case errors.Is(err, ErrNotFound):
			ae = &APIError{Status: http.StatusNotFound, Message: err.Error()}
		default:
			ae = &APIError{Status: http.StatusInternalServerError, Message: err.Error()}
		}
	}
	body := map[string]string{"detail": ae.Message}
	if ae.Hint != "" {
		body["hint"] = ae.Hint
	}
	if sw, ok := w.(*statusWriter); ok && ae.Status >= 500 {
		sw.err = err // logged by instrument with the route
	}
	writeJSON(w, ae.Status, body)
}

// WriteJSON answers v as JSON with status, as the API's routes answer (no HTML escaping). An
// application's routes use it through server/appkit.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// WriteError answers err in the API's one error shape, {"detail": ..., "hint": ...}: an
// *APIError with its status, ErrNotFound 404, anything else 500. An application's routes use it
// through server/appkit.
func WriteError(w http.ResponseWriter, err error) { writeError(w, err) }
