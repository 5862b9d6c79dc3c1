package tool_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) ToolStarted(_ context.Context, call message.ToolCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, "start "+call.ID)
}

func (r *recorder) ToolEnded(_ context.Context, o tool.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, "end "+o.Call.ID+" "+o.Message.Content)
}

func TestCallObserver(t *testing.T) {
	var rec *recorder
	echo, err := tool.New("echo", "says what it is given", func(ctx context.Context, a struct {
		Text string `json:"text"`
	}) (string, error) {
		rec.mu.Lock()
		rec.log = append(rec.log, "run "+a.Text)
		rec.mu.Unlock()
		return a.Text, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := tool.NewExecutor([]tool.Tool{echo}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec = &recorder{}
	ctx := tool.WithCallObserver(context.Background(), rec)
	if _, err := exec.Run(ctx, []message.ToolCall{{ID: "c1", Name: "echo", Arguments: []byte(`{"text":"hi"}`)}}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"start c1", "run hi", "end c1 hi"}; !slices.Equal(rec.log, want) {
		t.Fatalf("one call: %q, want %q", rec.log, want)
	}
	rec.log = nil
	if _, err := exec.Run(ctx, []message.ToolCall{{ID: "a", Name: "echo", Arguments: []byte(`{"text":"x"}`)}, {ID: "b", Name: "nope"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		s := slices.Index(rec.log, "start "+id)
		e := slices.IndexFunc(rec.log, func(l string) bool { return len(l) > 4 && l[:4+len(id)] == "end "+id })
		if s < 0 || e < s {
			t.Fatalf("call %s: %q", id, rec.log)
		}
	}
	// Without an observer nothing is recorded.
	rec.log = nil
	if _, err := exec.Run(context.Background(), []message.ToolCall{{ID: "c2", Name: "echo", Arguments: []byte(`{"text":"q"}`)}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.log, []string{"run q"}) {
		t.Fatalf("no observer: %q", rec.log)
	}
}
