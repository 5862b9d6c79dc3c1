package conversation

import (
	"slices"

	"github.com/trellis-go/trellis/message"
)

// RepairHistory returns msgs with an error result added after every tool call that has none (a
// run that crashed or was interrupted between a model's call and its result), so that the next
// model call does not fail on an unanswered call. msgs itself is not modified.
func RepairHistory(msgs []message.Message) []message.Message {
	if wellFormed(msgs) {
		return msgs
	}
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == message.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var out []message.Message
	for i, m := range msgs {
		if m.Role != message.RoleAssistant || len(m.ToolCalls) == 0 {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		var missing []message.ToolCall
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				missing = append(missing, c)
			}
		}
		// The last assistant turn's calls may still be about to run: only earlier ones are broken.
		if len(missing) == 0 || i == len(msgs)-1 {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = slices.Clone(msgs[:i])
		}
		out = append(out, m)
		for _, c := range missing {
			out = append(out, message.ToolError(c.ID, c.Name, "This tool call did not complete (the run was interrupted before its result was recorded). Call it again if it is still needed."))
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// wellFormed reports, without allocating, whether every tool call before the last assistant turn
// is answered by a tool message among those that follow its turn, the usual shape of a history.
func wellFormed(msgs []message.Message) bool {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role != message.RoleAssistant || len(m.ToolCalls) == 0 || i == len(msgs)-1 {
			continue
		}
		j := i + 1
		for j < len(msgs) && msgs[j].Role == message.RoleTool {
			j++
		}
		for _, c := range m.ToolCalls {
			found := false
			for _, r := range msgs[i+1 : j] {
				if r.ToolCallID == c.ID {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}
