package modeltest

import (
	"encoding/json"
	"time"
)

func openAIFinish(rep Reply) string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func openAIUsage(rep Reply) map[string]any {
	return map[string]any{"prompt_tokens": rep.Usage.InputTokens, "completion_tokens": rep.Usage.OutputTokens, "total_tokens": rep.Usage.Total()}
}

func openAIWhole(rep Reply, modelName string) []byte {
	msg := map[string]any{"role": "assistant", "content": rep.Text, "refusal": nil}
	if len(rep.ToolCalls) > 0 {
		var calls []any
		for _, tc := range rep.ToolCalls {
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": args(tc)}})
		}
		msg["tool_calls"] = calls
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-modeltest", "object": "chat.completion", "created": time.Now().Unix(), "model": modelName,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": openAIFinish(rep), "logprobs": nil}},
		"usage":   openAIUsage(rep),
	})
	return b
}

func openAIStream(s *sse, rep Reply, modelName string, includeUsage bool) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": modelName,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range textPieces(rep) {
		if !s.text() {
			return
		}
		s.event("", chunk(map[string]any{"content": p}, nil))
	}
	if rep.Malformed {
		s.raw("data: {\"id\":\"chatcmpl-modeltest\",\"choices\":[{\"index\":0,\"delta\":{\"content\": oops}}]}\n\n")
		return
	}
	for i, tc := range rep.ToolCalls {
		names := []string{tc.Name}
		if rep.SplitArgs > 0 && len(tc.Name) > 1 {
			names = []string{tc.Name[:len(tc.Name)/2], tc.Name[len(tc.Name)/2:]}
		}
		for j, n := range names {
			call := map[string]any{"index": i, "function": map[string]any{"name": n, "arguments": ""}}
			if j == 0 {
				call["id"], call["type"] = tc.ID, "function"
			}
			s.event("", chunk(map[string]any{"tool_calls": []any{call}}, nil))
		}
		for _, p := range pieces(args(tc), rep.SplitArgs) {
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	s.event("", chunk(map[string]any{}, openAIFinish(rep)))
	if includeUsage {
		s.event("", map[string]any{"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": modelName, "choices": []any{}, "usage": openAIUsage(rep)})
	}
	s.raw("data: [DONE]\n\n")
}
