package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
)

// TestReviewSendsBackWithCritique: the first answer is sent back, the critique reaches the
// worker, and the revised answer is approved.
func TestReviewSendsBackWithCritique(t *testing.T) {
	t.Parallel()
	var seen [][]string
	worker := func(_ context.Context, task agent.Task) (agent.AgentResult, error) {
		seen = append(seen, task.Critiques)
		answer := "Prices rose."
		if len(task.Critiques) > 0 && strings.Contains(task.Critiques[0], "figure") {
			answer = "Prices rose 4.2% in 2025."
		}
		return agent.AgentResult{Agent: "writer", Answer: answer}, nil
	}
	reviewer := func(_ context.Context, _ agent.Task, r agent.AgentResult, round int) (agent.Verdict, error) {
		if strings.ContainsAny(r.Answer, "0123456789") {
			return agent.Verdict{Approved: true}, nil
		}
		return agent.Verdict{Critique: "Give a figure."}, nil
	}
	run, err := agent.Reviewed(agent.ReviewOptions{Worker: worker, Reviewer: reviewer})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), agent.Task{Agent: "writer", Request: "How did prices move?"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "Prices rose 4.2% in 2025." || res.Metadata["review"] != "approved" || res.Metadata["review_rounds"] != 2 {
		t.Fatalf("result %+v", res)
	}
	if len(seen) != 2 || len(seen[0]) != 0 || len(seen[1]) != 1 || seen[1][0] != "Give a figure." {
		t.Fatalf("critiques seen by the worker: %q", seen)
	}
}

// TestReviewIsBounded: a reviewer that never approves stops after MaxRounds worker runs.
func TestReviewIsBounded(t *testing.T) {
	t.Parallel()
	runs := 0
	g, err := agent.NewReview(agent.ReviewOptions{MaxRounds: 2,
		Worker: func(context.Context, agent.Task) (agent.AgentResult, error) {
			runs++
			return agent.AgentResult{Answer: "draft"}, nil
		},
		Reviewer: func(context.Context, agent.Task, agent.AgentResult, int) (agent.Verdict, error) {
			return agent.Verdict{Critique: "Not yet."}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), agent.ReviewState{Task: agent.Task{Request: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || out.Approved || out.Result.Metadata["review"] != "not_approved" || out.Result.Metadata["review_critique"] != "Not yet." || len(out.Critiques) != 1 {
		t.Fatalf("runs %d, state %+v", runs, out)
	}
	if _, err := agent.NewReview(agent.ReviewOptions{Worker: func(context.Context, agent.Task) (agent.AgentResult, error) { return agent.AgentResult{}, nil }}); err == nil || !strings.Contains(err.Error(), "Reviewer") {
		t.Errorf("no reviewer: %v", err)
	}
}

// TestReviewReachesAReActWorker: a ReAct worker reads the critique as a user turn after its
// previous answer; the offline reviewer sends back an empty answer and approves a real one.
func TestReviewReachesAReActWorker(t *testing.T) {
	t.Parallel()
	m := scripted.New(scripted.Text(""), scripted.Text("A revised answer."))
	g, err := agent.NewReAct(agent.ReActOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	worker := func(ctx context.Context, task agent.Task) (agent.AgentResult, error) {
		out, err := g.Invoke(ctx, agent.ReActInput(task))
		if err != nil {
			return agent.AgentResult{}, err
		}
		return agent.ReActResult(out), nil
	}
	run, err := agent.Reviewed(agent.ReviewOptions{Worker: worker, Model: offline.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), agent.Task{Request: "Summarise the report", Messages: []message.Message{message.User("Summarise the report")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "A revised answer." || res.Metadata["review"] != "approved" {
		t.Fatalf("result %+v", res)
	}
	reqs := m.Requests()
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != message.RoleUser || !strings.Contains(last.Text(), "The answer is empty") || !strings.Contains(last.Text(), "Summarise the report") {
		t.Fatalf("second model call ends with %+v, want the critique", last)
	}
}
