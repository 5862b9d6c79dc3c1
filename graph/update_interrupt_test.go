package graph_test

import (
	"slices"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

func TestUpdateStateWhilePausedKeepsTheInterrupt(t *testing.T) {
	// The usual human-in-the-loop edit: the run waits at an interrupt, a person edits the state,
	// then answers. The answer must reach the waiting interrupt, and the sibling that finished
	// in the paused superstep must not run again.
	calls := newCounter()
	c := twoApprovals(t, calls)
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	ins := interrupted(t, err)
	if _, err := c.UpdateState(bg, refOf("t"), S{Answer: "edited"}, ""); err != nil {
		t.Fatal(err)
	}
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Interrupts()) != 2 {
		t.Fatalf("after the update the thread waits on %d interrupts, want the 2 it waited on", len(snap.Interrupts()))
	}
	m := map[string]any{}
	for _, in := range ins {
		m[in.ID] = "ok"
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.ResumeMap(m))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out.Notes)
	if want := []string{"audit", "finance: ok", "legal: ok"}; !slices.Equal(out.Notes, want) || out.Answer != "edited" || out.Count != 1 {
		t.Fatalf("got %+v, want notes %q, the edit kept and audit counted once", out, want)
	}
	if calls.get("audit") != 1 {
		t.Fatalf("audit ran %d times", calls.get("audit"))
	}
}
