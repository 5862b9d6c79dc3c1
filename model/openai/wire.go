package openai

import (
	"encoding/json"
	"fmt"
)

// The stream is read with the SDK's request machinery (retries, Retry-After, authentication,
// error decoding) and its SSE decoder, but each event is decoded here into wireChunk, which holds
// only the fields Stream uses. The SDK's own ChatCompletionChunk keeps a raw copy and validity
// metadata for every field of every chunk, and its stream scans each event a second time for an
// error field; together that was most of the time the model layer added per streamed token.

var (
	doneMarker = []byte("[DONE]")
	jsonNull   = []byte("null")
)

// wireChunk is one chat.completion.chunk event, or an error event.
type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content   string         `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// decode reads one event's data into c, reusing c's choices so that a text chunk allocates only
// its text.
func (c *wireChunk) decode(data []byte) error {
	choices := c.Choices[:cap(c.Choices)]
	clear(choices)
	*c = wireChunk{Choices: choices[:0]}
	if err := json.Unmarshal(data, c); err != nil {
		return fmt.Errorf("openai: malformed stream event %.200q: %w", data, err)
	}
	return nil
}

// errorText returns the message of an error event's "error" value: its "message" field when it is
// an object that has one, the string itself when it is a string, and the raw JSON otherwise.
func errorText(raw json.RawMessage) string {
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	return string(raw)
}
