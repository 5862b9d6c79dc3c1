package server

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/trellis-go/trellis/server/internal/lcwire"
)

// The API speaks LangChain's message shape (package internal/lcwire holds the wire formats).
// Every route and the runner reach an assistant's graph through apiGraph (langchain_graph.go),
// which converts at the edge; run input is checked here before a run is created.

// checkRunInput refuses a run whose input or command.update holds a message the API cannot
// read, before the run is created, with a 400 naming the field. It checks runs on registered
// assistants; checkRunInputFor checks those on the tenant's own too.
func (s *Server) checkRunInput(req *runCreate) error {
	a, ok := s.byID[req.AssistantID]
	if !ok {
		return nil // the runner reports the assistant, and the graph the input
	}
	return checkInputOf(a, req)
}

// checkRunInputFor is checkRunInput for a tenant's runs, on its own assistants as well.
func (s *Server) checkRunInputFor(ctx context.Context, tenant string, req *runCreate) error {
	a, err := s.assistantFor(ctx, tenant, req.AssistantID)
	if err != nil {
		return nil // the runner reports the assistant
	}
	return checkInputOf(a, req)
}

func checkInputOf(a *Assistant, req *runCreate) error {
	if _, err := inputFromAPI(a.graph.StateType(), req.Input); err != nil {
		return err
	}
	if req.Command != nil {
		if _, err := inputFromAPI(a.graph.StateType(), req.Command.Update); err != nil {
			return err
		}
	}
	return nil
}

// inputFromAPI is lcwire.Input with its errors as the API's 400s.
func inputFromAPI(t reflect.Type, raw json.RawMessage) (json.RawMessage, error) {
	out, err := lcwire.Input(t, raw)
	var ie *lcwire.InputError
	if errors.As(err, &ie) {
		return nil, badRequest(ie.Hint, "%v", ie.Err)
	}
	return out, err
}
