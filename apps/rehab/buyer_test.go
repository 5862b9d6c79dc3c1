package rehab

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// TestBuyerSession: each message of testdata/buyer.txt (a QA session's messages and held-out
// paraphrases of them) is planned as written beside it, against argState.
func TestBuyerSession(t *testing.T) {
	ts, err := (&Orchestrator{}).Tools()
	if err != nil {
		t.Fatal(err)
	}
	specs := make([]model.ToolSpec, len(ts))
	for i, x := range ts {
		specs[i] = x.Spec()
	}
	f, err := os.Open("testdata/buyer.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		checks, text, ok := strings.Cut(line, " | ")
		if !ok {
			t.Fatalf("testdata/buyer.txt:%d: want <checks> | <message>", n)
		}
		// The turn before, when written: a message that asked for a call.
		var msgs []message.Message
		text, after, hasPrev := strings.Cut(text, " | after ")
		if hasPrev {
			name, args, _ := strings.Cut(after, " ")
			msgs = append(msgs, message.User("…"), message.Assistant("", message.ToolCall{ID: "c0", Name: name, Arguments: json.RawMessage(args)}),
				message.Message{Role: message.RoleTool, ToolCallID: "c0", Content: "…"}, message.Assistant("…"))
		}
		msgs = append(msgs, message.User(text))
		intent, prev, err := turnIntent(context.Background(), nil, specs, msgs, len(msgs)-1)
		if err != nil {
			t.Fatal(err)
		}
		p := understand(argState(), text, intent, now, "t")
		p.again(prev)
		for _, c := range strings.Fields(checks) {
			if msg := checkPlan(p, c); msg != "" {
				t.Errorf("buyer.txt:%d %q: %s (intent %q, plan %s)", n, text, msg, intent, planString(p))
			}
		}
	}
}

// checkPlan is "" when the plan passes the check (testdata/buyer.txt's syntax), else what fails.
func checkPlan(p plan, check string) string {
	if check == "reply" {
		if p.reply == "" || len(p.steps) > 0 {
			return "want a question back"
		}
		return ""
	}
	neg := strings.HasPrefix(check, "!")
	check = strings.TrimPrefix(check, "!")
	name, arg, _ := strings.Cut(check, ".")
	arg, want, hasValue := strings.Cut(arg, "=")
	want = strings.ReplaceAll(want, "_", " ")
	found := false
	for _, step := range p.steps {
		for _, c := range step {
			if c.Name != name {
				continue
			}
			if arg == "" {
				found = true
				continue
			}
			var args map[string]any
			_ = json.Unmarshal(c.Arguments, &args)
			v, has := args[arg]
			if data, ok := args["data"].(map[string]any); ok && !has {
				v, has = data[arg]
			}
			if has && (!hasValue || valueString(v) == want) {
				found = true
			}
		}
	}
	switch {
	case neg && found:
		return "unwanted " + check
	case !neg && !found:
		return "missing " + check
	}
	return ""
}

func valueString(v any) string {
	if l, ok := v.([]any); ok {
		s := make([]string, len(l))
		for i, x := range l {
			s[i] = valueString(x)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	if f, ok := v.(float64); ok {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprint(v)
}

func planString(p plan) string {
	var b strings.Builder
	for _, step := range p.steps {
		for _, c := range step {
			fmt.Fprintf(&b, "%s%s ", c.Name, c.Arguments)
		}
	}
	if p.reply != "" {
		b.WriteString("reply: " + p.reply)
	}
	return b.String()
}
