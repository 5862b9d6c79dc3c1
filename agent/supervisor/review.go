package supervisor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Verdict is a reviewer's judgement of a worker's output.
type Verdict struct {
	// Approved ends the loop with the worker's output.
	Approved bool `json:"approved"`
	// Critique says what to change; it is given to the worker for the next round.
	Critique string `json:"critique,omitempty"`
}

// Reviewer judges a worker's result for a task. round counts from 1.
type Reviewer func(ctx context.Context, task Task, result AgentResult, round int) (Verdict, error)

// ReviewState is the state of a review loop.
type ReviewState struct {
	Task Task `json:"task"`
	// Result is the worker's latest output.
	Result *AgentResult `json:"result,omitempty"`
	// Critiques are the reviewer's critiques so far, oldest first.
	Critiques []string `json:"critiques,omitempty" reduce:"append"`
	// Rounds counts the worker's runs.
	Rounds   int  `json:"rounds,omitempty"`
	Approved bool `json:"approved,omitempty"`
}

// ReviewOptions configure [NewReview] and [Reviewed]. A reviewer is required: Reviewer, or a
// Model to review with; every other zero field is a documented default.
type ReviewOptions struct {
	// Name names the graph; "review" by default.
	Name string
	// Reviewer judges each result. When nil, Model reviews (see [ModelReviewer]).
	Reviewer Reviewer
	// Model and Criteria make the reviewer when Reviewer is nil.
	Model    model.Model
	Criteria string
	// MaxRounds bounds the worker's runs; zero means 3. When the last round is not approved
	// the loop ends with that result, its Metadata saying "review": "not_approved".
	MaxRounds int
	Compile   graph.CompileOptions
}

// Review node names.
const (
	NodeWork   = "work"
	NodeReview = "review"
)

// NewReview builds a review loop: worker does the task, the reviewer approves the result or
// sends it back with a critique, and worker tries again with the critique, up to MaxRounds runs.
// From the second round on, the task carries the reviewer's critiques (Task.Critiques) and, in
// Task.Messages, the worker's previous answer followed by a user turn with the critique, so a
// ReAct worker reads it as a request to revise. The final result's Metadata holds "review"
// ("approved" or "not_approved") and "review_rounds".
//
// worker is required, and so is a reviewer: o.Reviewer, or o.Model to review with.
func NewReview(worker AgentFunc, o *ReviewOptions) (*graph.Compiled[ReviewState], error) {
	if worker == nil {
		return nil, errors.New("supervisor: NewReview needs a worker")
	}
	var opts ReviewOptions
	if o != nil {
		opts = *o
	}
	o = &opts
	reviewer := o.Reviewer
	if reviewer == nil {
		if o.Model == nil {
			return nil, errors.New("supervisor: NewReview needs ReviewOptions.Reviewer, or ReviewOptions.Model to review with")
		}
		reviewer = ModelReviewer(o.Model, o.Criteria)
	}
	maxRounds := o.MaxRounds
	if maxRounds == 0 {
		maxRounds = 3
	}
	if maxRounds < 0 {
		return nil, fmt.Errorf("supervisor: ReviewOptions.MaxRounds is %d; use a positive number, or 0 for 3", maxRounds)
	}
	g := graph.New[ReviewState]()
	g.AddNode(NodeWork, func(ctx context.Context, s ReviewState) (ReviewState, error) {
		task := s.Task
		if len(s.Critiques) > 0 && s.Result != nil {
			task = revise(task, *s.Result, s.Critiques)
		}
		res, err := worker(ctx, task)
		if err != nil {
			return ReviewState{}, fmt.Errorf("supervisor: review round %d: the worker: %w", s.Rounds+1, err)
		}
		return ReviewState{Result: &res, Rounds: s.Rounds + 1}, nil
	})
	g.AddNode(NodeReview, func(ctx context.Context, s ReviewState) (ReviewState, error) {
		if s.Result == nil {
			return ReviewState{}, errors.New("supervisor: review: the worker returned no result")
		}
		v, err := reviewer(ctx, s.Task, *s.Result, s.Rounds)
		if err != nil {
			return ReviewState{}, fmt.Errorf("supervisor: review round %d: the reviewer: %w", s.Rounds, err)
		}
		res := *s.Result
		md := map[string]any{}
		for k, x := range res.Metadata {
			md[k] = x
		}
		md["review_rounds"] = s.Rounds
		res.Metadata = md
		switch {
		case v.Approved:
			md["review"] = "approved"
			return ReviewState{Result: &res, Approved: true}, nil
		case s.Rounds >= maxRounds:
			md["review"] = "not_approved"
			if c := strings.TrimSpace(v.Critique); c != "" {
				md["review_critique"] = c
			}
			return ReviewState{Result: &res}, nil
		}
		c := strings.TrimSpace(v.Critique)
		if c == "" {
			c = "The reviewer did not approve this answer. Improve it."
		}
		return ReviewState{Critiques: []string{c}}, nil
	})
	g.AddEdge(graph.START, NodeWork)
	g.AddEdge(NodeWork, NodeReview)
	g.AddConditionalEdges(NodeReview, func(_ context.Context, s ReviewState) (string, error) {
		if s.Approved || s.Rounds >= maxRounds {
			return graph.END, nil
		}
		return NodeWork, nil
	}, map[string]string{NodeWork: NodeWork, graph.END: graph.END})
	co := o.Compile
	co.Name = cmp.Or(co.Name, o.Name, "review")
	return g.Compile(co)
}

// Reviewed returns an agent function that runs the review loop of [NewReview] for each task, for
// use as a supervisor's agent (Agent.Run).
func Reviewed(worker AgentFunc, o *ReviewOptions) (AgentFunc, error) {
	g, err := NewReview(worker, o)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, task Task) (AgentResult, error) {
		out, err := g.Invoke(ctx, ReviewState{Task: task})
		if err != nil {
			return AgentResult{}, err
		}
		if out.Result == nil {
			return AgentResult{}, errors.New("supervisor: review ended without a result")
		}
		return *out.Result, nil
	}, nil
}

// revise is the task for another round: the critiques, and the conversation extended by the
// previous answer and a request to revise it.
func revise(t Task, prev AgentResult, critiques []string) Task {
	t.Critiques = append([]string(nil), critiques...)
	msgs := make([]message.Message, 0, len(t.Messages)+2)
	msgs = append(msgs, t.Messages...)
	if prev.Answer != "" {
		msgs = append(msgs, message.Assistant(prev.Answer))
	}
	last := critiques[len(critiques)-1]
	msgs = append(msgs, message.User("A reviewer sent your answer back with this critique: "+last+"\nRevise your answer to address it."))
	t.Messages = msgs
	return t
}

var verdictSchema = &model.Schema{Name: "review_verdict", Description: "Approve the answer, or send it back with a critique.",
	JSON: json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean","description":"true when the answer meets every criterion"},"critique":{"type":"string","description":"what to change when not approved; empty when approved"}},"required":["approved","critique"]}`)}

// ModelReviewer reviews with a model: it shows the task, the criteria and the answer, and asks
// for a [Verdict] as structured output. With the offline model, which cannot judge, it reviews
// by rule instead: a result with an error or an empty answer is sent back saying so; any other
// is approved.
func ModelReviewer(m model.Model, criteria string) Reviewer {
	return func(ctx context.Context, task Task, res AgentResult, round int) (Verdict, error) {
		if model.IsOffline(m) {
			switch {
			case res.Error != "":
				return Verdict{Critique: "The work failed: " + res.Error + ". Try again, another way if needed."}, nil
			case strings.TrimSpace(res.Answer) == "" && len(res.Data) == 0:
				return Verdict{Critique: "The answer is empty. Answer the request: " + task.Request}, nil
			}
			return Verdict{Approved: true}, nil
		}
		prompt := "You review an assistant's answer before it reaches the user. Approve it when it fully and correctly answers the request; otherwise send it back with a short, specific critique."
		if criteria != "" {
			prompt += "\n\nCriteria:\n" + criteria
		}
		answer := res.Answer
		if len(res.Data) > 0 {
			answer += "\n\nData: " + string(res.Data)
		}
		if res.Error != "" {
			answer += "\n\nError: " + res.Error
		}
		resp, err := m.Generate(ctx, &model.Request{Schema: verdictSchema, Messages: []message.Message{
			message.System(prompt),
			message.User(fmt.Sprintf("Request:\n%s\n\nAnswer (round %d):\n%s", task.Request, round, answer)),
		}})
		if err != nil {
			return Verdict{}, err
		}
		var v Verdict
		raw := resp.Structured
		if len(raw) == 0 {
			raw = json.RawMessage(resp.Message.Text())
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return Verdict{}, fmt.Errorf("the reviewer's verdict is not {approved, critique}: %w", err)
		}
		return v, nil
	}
}
