// Package agent holds prebuilt agent patterns on the graph runtime: the ReAct loop (a model and
// its tools in a loop, with human approval of chosen tools through Agent Inbox interrupts), and
// the helpers they share: streaming a model call into the graph's messages stream, and repairing
// a history whose tool calls lost their results.
//
//	agent, err := agent.NewReAct(agent.ReActOptions{
//		Model: m,
//		Tools: []tool.Tool{search},
//		Prompt: "You answer questions about listings.",
//	})
//	out, err := agent.Invoke(ctx, agent.State{Messages: []message.Message{message.User("hi")}})
package agent
