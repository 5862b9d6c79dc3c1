package model

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Match them with errors.Is; the struct errors below wrap them.
var (
	// ErrContextWindowExceeded means the conversation no longer fits the model's context window.
	// Compaction reacts to it by summarising older turns and calling again.
	ErrContextWindowExceeded = errors.New("model: context window exceeded")
	// ErrStructuredOutput means the reply to a structured-output request did not match its schema,
	// even after one repair attempt.
	ErrStructuredOutput = errors.New("model: reply does not match the requested schema")
	// ErrInvalidRequest means a Request was malformed before anything was sent.
	ErrInvalidRequest = errors.New("model: invalid request")
	// ErrConfig means a model setting (such as TRELLIS_MODEL) could not be used.
	ErrConfig = errors.New("model: bad model configuration")
	// ErrMissingKey means a provider was chosen but its API key variable is empty.
	ErrMissingKey = errors.New("model: missing API key")
)

// RequestError says which field of a Request is wrong and how to fix it.
type RequestError struct {
	Field   string // for example "Messages" or "Tools[2].Parameters"
	Problem string
	Hint    string
}

func (e *RequestError) Error() string {
	s := fmt.Sprintf("model: invalid request: %s: %s", e.Field, e.Problem)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Is reports whether target is ErrInvalidRequest.
func (e *RequestError) Is(target error) bool { return target == ErrInvalidRequest }

// ConfigError reports a model setting that cannot be used, naming the setting and what to do.
type ConfigError struct {
	Setting string // the environment variable or option, e.g. "TRELLIS_MODEL_FAST"
	Value   string // what it held (never a secret)
	Problem string
	Hint    string
	Err     error // ErrMissingKey, or nil
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("model: ")
	b.WriteString(e.Setting)
	if e.Value != "" {
		fmt.Fprintf(&b, "=%q", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// Unwrap returns the underlying cause, such as ErrMissingKey.
func (e *ConfigError) Unwrap() error { return e.Err }

// ProviderError is a failed call to a provider. It keeps the text the model had streamed before
// the failure, so a run that ends on it can still show what was written.
type ProviderError struct {
	Provider   string // "openai", "anthropic", "openai-compatible", ...
	Model      string
	StatusCode int    // the HTTP status, or 0 when the failure was not an HTTP answer
	Partial    string // text streamed before the failure
	Err        error
}

func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString("model: ")
	b.WriteString(e.Provider)
	if e.Model != "" {
		b.WriteString(" " + e.Model)
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("call failed")
	}
	if e.Partial != "" {
		fmt.Fprintf(&b, " [after %d characters of partial reply]", len(e.Partial))
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ProviderError) Unwrap() error { return e.Err }

// PartialText returns the text a model streamed before err ended its turn, or "".
func PartialText(err error) string {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe.Partial
	}
	return ""
}

// StructuredOutputError is the final failure of a structured-output request: the model's last
// reply and what was wrong with it.
type StructuredOutputError struct {
	Schema   string // the schema's name
	Output   string // the model's last reply
	Problem  string // why it does not match
	Attempts int
}

func (e *StructuredOutputError) Error() string {
	return fmt.Sprintf("model: reply does not match schema %q after %d attempt(s): %s", e.Schema, e.Attempts, e.Problem)
}

// Is reports whether target is ErrStructuredOutput.
func (e *StructuredOutputError) Is(target error) bool { return target == ErrStructuredOutput }
