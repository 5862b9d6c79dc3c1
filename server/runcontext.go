package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/tool"
)

// A run's context (the "context" field of runs, crons and assistants, LangGraph's typed
// runtime context) is checked against the schema its graph publishes as context_schema
// (graph.CompileOptions.ContextType) before the run is queued; the graph receives it with
// graph.WithContext and decodes it into its context type. It is also merged into the run's
// configurable values, as the LangGraph API does.

// contextTypeOf returns the context type g declares, or nil.
func contextTypeOf(g graph.Runnable) reflect.Type {
	if a, ok := g.(*apiGraph); ok {
		g = a.Runnable
	}
	if c, ok := g.(interface{ ContextType() reflect.Type }); ok {
		return c.ContextType()
	}
	return nil
}

// contextSchemas holds the compiled context schemas by type, whole and partial.
var contextSchemas sync.Map // contextSchemaKey -> *tool.Schema

type contextSchemaKey struct {
	t       reflect.Type
	partial bool
}

// contextSchema compiles the published context_schema of t; partial drops its required
// fields (an assistant's context may leave some to its runs).
func contextSchema(t reflect.Type, partial bool) (*tool.Schema, error) {
	key := contextSchemaKey{t, partial}
	if s, ok := contextSchemas.Load(key); ok {
		return s.(*tool.Schema), nil
	}
	m, ok := schemaOf(t, nil).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("server: no JSON Schema for context type %s", t)
	}
	if partial {
		delete(m, "required")
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	s, err := tool.CompileSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("server: the context schema of %s: %w", t, err)
	}
	contextSchemas.Store(key, s)
	return s, nil
}

var argumentWords = strings.NewReplacer("arguments", "fields", "argument", "field")

// checkContext checks ctx, given in field (the run's context merged with its assistant's, or
// an assistant's alone when partial), against the context schema g publishes. A graph that
// declares no context type takes any context; an empty context is no context.
func checkContext(g graph.Runnable, field string, ctx map[string]any, partial bool) error {
	t := contextTypeOf(g)
	if t == nil || len(ctx) == 0 {
		return nil
	}
	s, err := contextSchema(t, partial)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(ctx)
	if err != nil {
		return badRequest("send the context as a JSON object", "field %q cannot be encoded: %v", field, err)
	}
	_, err = s.Validate(field, raw)
	var ae *tool.ArgumentError
	if errors.As(err, &ae) {
		problems := make([]string, len(ae.Problems))
		for i, p := range ae.Problems {
			msg := argumentWords.Replace(p.Message) // the validator words its problems for tool calls
			if p.Path != "" {
				problems[i] = fmt.Sprintf("%s.%s: %s", field, p.Path, msg)
			} else {
				problems[i] = fmt.Sprintf("%s: %s", field, msg)
			}
		}
		return &APIError{Status: http.StatusUnprocessableEntity, kind: ErrBadRequest,
			Message: fmt.Sprintf("field %q does not match the graph's context_schema: %s", field, strings.Join(problems, "; ")),
			Hint:    "send the fields context_schema lists (GET /assistants/{assistant_id}/schemas), with their types"}
	}
	return err
}

// checkCronContext checks the context of a cron's runs (its payload's, merged with its
// assistant's) as a run's is checked when it is created.
func (s *Server) checkCronContext(a *Assistant, payload map[string]any) error {
	v, ok := payload["context"]
	if !ok || v == nil {
		_, merged := withAssistantConfig(a, nil, nil)
		return checkContext(a.graph, "context", merged, false)
	}
	ctx, ok := v.(map[string]any)
	if !ok {
		return badRequest("send the context as a JSON object of the fields context_schema lists", "field \"context\" must be an object")
	}
	_, merged := withAssistantConfig(a, nil, ctx)
	return checkContext(a.graph, "context", merged, false)
}
