package modeltest

import (
	"encoding/json"
)

func anthropicStop(rep Reply) string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func anthropicWhole(rep Reply, modelName string) []byte {
	content := []any{}
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	for _, tc := range rep.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(args(tc))})
	}
	b, _ := json.Marshal(map[string]any{
		"id": "msg_modeltest", "type": "message", "role": "assistant", "model": modelName, "content": content,
		"stop_reason": anthropicStop(rep), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.Usage.InputTokens, "output_tokens": rep.Usage.OutputTokens},
	})
	return b
}

func anthropicStream(s *sse, rep Reply, modelName string) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_modeltest", "type": "message", "role": "assistant", "model": modelName, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": rep.Usage.InputTokens, "output_tokens": 1},
	}})
	idx := 0
	if texts := textPieces(rep); len(texts) > 0 {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range texts {
			if !s.text() {
				return
			}
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if rep.Malformed {
		s.raw("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\": oops}}\n\n")
		return
	}
	for _, tc := range rep.ToolCalls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}})
		for _, p := range pieces(args(tc), rep.SplitArgs) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": anthropicStop(rep), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": rep.Usage.OutputTokens}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}
