package supervisor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
)

// TestReviewSendsBackWithCritique: the first answer is sent back, the critique reaches the
// worker, and the revised answer is approved.
func TestReviewSendsBackWithCritique(t *testing.T) {
	t.Parallel()
	var seen [][]string
	worker := func(_ context.Context, task supervisor.Task) (supervisor.AgentResult, error) {
		seen = append(seen, task.Critiques)
		answer := "Prices rose."
		if len(task.Critiques) > 0 && strings.Contains(task.Critiques[0], "figure") {
			answer = "Prices rose 4.2% in 2025."
		}
		return supervisor.AgentResult{Agent: "writer", Answer: answer}, nil
	}
	reviewer := func(_ context.Context, _ supervisor.Task, r supervisor.AgentResult, round int) (supervisor.Verdict, error) {
		if strings.ContainsAny(r.Answer, "0123456789") {
			return supervisor.Verdict{Approved: true}, nil
		}
		return supervisor.Verdict{Critique: "Give a figure."}, nil
	}
	run, err := supervisor.Reviewed(worker, &supervisor.ReviewOptions{Reviewer: reviewer})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), supervisor.Task{Agent: "writer", Request: "How did prices move?"})
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
	g, err := supervisor.NewReview(func(context.Context, supervisor.Task) (supervisor.AgentResult, error) {
		runs++
		return supervisor.AgentResult{Answer: "draft"}, nil
	}, &supervisor.ReviewOptions{MaxRounds: 2,
		Reviewer: func(context.Context, supervisor.Task, supervisor.AgentResult, int) (supervisor.Verdict, error) {
			return supervisor.Verdict{Critique: "Not yet."}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), supervisor.ReviewState{Task: supervisor.Task{Request: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || out.Approved || out.Result.Metadata["review"] != "not_approved" || out.Result.Metadata["review_critique"] != "Not yet." || len(out.Critiques) != 1 {
		t.Fatalf("runs %d, state %+v", runs, out)
	}
	if _, err := supervisor.NewReview(func(context.Context, supervisor.Task) (supervisor.AgentResult, error) {
		return supervisor.AgentResult{}, nil
	}, nil); err == nil || !strings.Contains(err.Error(), "Reviewer") {
		t.Errorf("no reviewer: %v", err)
	}
	if _, err := supervisor.Reviewed(nil, &supervisor.ReviewOptions{Model: offline.New(nil)}); err == nil || !strings.Contains(err.Error(), "needs a worker") {
		t.Errorf("no worker: %v", err)
	}
}

// TestReviewReachesAReActWorker: a ReAct worker reads the critique as a user turn after its
// previous answer; the offline reviewer sends back an empty answer and approves a real one.
func TestReviewReachesAReActWorker(t *testing.T) {
	t.Parallel()
	m := scripted.New(scripted.Text(""), scripted.Text("A revised answer."))
	g, err := react.New(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	worker := func(ctx context.Context, task supervisor.Task) (supervisor.AgentResult, error) {
		out, err := g.Invoke(ctx, supervisor.ReActInput(task))
		if err != nil {
			return supervisor.AgentResult{}, err
		}
		return supervisor.ReActResult(out), nil
	}
	run, err := supervisor.Reviewed(worker, &supervisor.ReviewOptions{Model: offline.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), supervisor.Task{Request: "Summarise the report", Messages: []message.Message{message.User("Summarise the report")}})
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
