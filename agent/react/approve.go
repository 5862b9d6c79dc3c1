package react

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/message"
)

// reviewCalls asks a person about every call of a tool that needs approval, in order. It returns
// the calls to run (edited where the person edited them), the tool messages of calls that will
// not run, and whether the person chose to stop the run.
func reviewCalls(ctx context.Context, calls []message.ToolCall, needsApproval func(message.ToolCall) bool) (run []message.ToolCall, skipped map[string]message.Message, abort bool, err error) {
	skip := func(id string, m message.Message) {
		if skipped == nil {
			skipped = map[string]message.Message{} // made only when a call is skipped
		}
		skipped[id] = m
	}
	for _, c := range calls {
		if abort || !needsApproval(c) {
			if abort {
				skip(c.ID, message.ToolError(c.ID, c.Name, "Not run: the person reviewing this turn stopped the run."))
				continue
			}
			run = append(run, c)
			continue
		}
		args := map[string]any{}
		if len(c.Arguments) > 0 {
			_ = json.Unmarshal(c.Arguments, &args)
		}
		resp, err := agent.AskHuman(ctx, agent.HumanInterrupt{
			ActionRequest: agent.ActionRequest{Action: c.Name, Args: args},
			Config:        agent.InboxConfig{AllowIgnore: true, AllowRespond: true, AllowEdit: true, AllowAccept: true},
			Description:   fmt.Sprintf("The agent wants to call **%s** with:\n\n```json\n%s\n```", c.Name, prettyJSON(c.Arguments)),
		})
		if err != nil {
			return nil, nil, false, err
		}
		switch resp.Type {
		case agent.ResponseAccept:
			run = append(run, c)
		case agent.ResponseEdit:
			var edited agent.ActionRequest
			if err := json.Unmarshal(resp.Args, &edited); err != nil {
				return nil, nil, false, fmt.Errorf("react: an edit must carry {action, args}: %w", err)
			}
			data, err := json.Marshal(edited.Args)
			if err != nil {
				return nil, nil, false, err
			}
			c.Arguments = data
			run = append(run, c)
		case agent.ResponseRespond:
			var text string
			if err := json.Unmarshal(resp.Args, &text); err != nil {
				text = string(resp.Args)
			}
			skip(c.ID, message.ToolResult(c.ID, c.Name, "The person reviewing this call did not run it and answered instead: "+text))
		case agent.ResponseIgnore:
			skip(c.ID, message.ToolError(c.ID, c.Name, "Not run: the person reviewing this call ignored it and stopped the run."))
			abort = true
		}
	}
	return run, skipped, abort, nil
}

func prettyJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}
