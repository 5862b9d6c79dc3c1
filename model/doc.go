// Package model is trellis's chat-model interface: the one shape every provider, test model and
// the offline model share, so graphs and agents never depend on a particular vendor.
//
// # Calling a model
//
// A [Model] has two methods. Generate returns a whole assistant turn; Stream yields it as it is
// written, as an iter.Seq2 of [Chunk] values:
//
//	req := &model.Request{
//		Messages: []message.Message{message.System("Be brief."), message.User("Weather in Porto?")},
//		Tools:    []model.ToolSpec{weatherTool},
//	}
//	for chunk, err := range m.Stream(ctx, req) {
//		if err != nil {
//			return err // model.PartialText(err) holds what was written before the failure
//		}
//		fmt.Print(chunk.Text)
//		if chunk.ToolCall != nil { ... } // whole calls only, however the provider split them
//	}
//
// [Collect] turns a stream into a [Response]. Providers stream tool calls in fragments; a
// [CallAssembler] rebuilds them, and a call's arguments that are not valid JSON are kept as a JSON
// string so the message can still be stored and the tool node can tell the model what went wrong.
//
// # Structured output
//
// A Request with a [Schema] asks for JSON. Generate validates the reply against the schema, asks
// the model once to repair a reply that does not match, and then fails with a
// [*StructuredOutputError]. [GenerateStructured] implements that loop for any provider.
//
// # Choosing models by role
//
// Applications ask for a model by what a call needs: [RoleFast] for summaries, titles and routing,
// [RoleStrong] for planning and answers, [RoleVision] for reading images, the default for
// everything else. [Roles] maps roles to models; package provider builds it from TRELLIS_MODEL and
// TRELLIS_MODEL_<ROLE>, falling back to the offline model when nothing is configured.
//
// # Errors
//
// Errors start with "model:". Match them with errors.Is against [ErrContextWindowExceeded] (the
// cue to compact a conversation), [ErrStructuredOutput], [ErrInvalidRequest], [ErrConfig] and
// [ErrMissingKey]; [ProviderError] carries the provider, HTTP status and the partial text.
//
// # Implementations
//
//   - model/openai: OpenAI and any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LiteLLM).
//   - model/anthropic: Claude.
//   - model/offline: the deterministic rule-based model used when no provider is configured.
//   - model/scripted: replays responses in tests.
//   - model/modeltest: local servers speaking the OpenAI and Anthropic wire formats.
//   - model/tokens: offline token counting.
package model
