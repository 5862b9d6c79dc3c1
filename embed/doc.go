// Package embed turns text into vectors for semantic search.
//
// Two embedders ship with trellis:
//
//   - [Local] works offline and deterministically: no key, no model file, no network. It hashes
//     words, word pairs and character trigrams into a fixed-size vector, so texts that share
//     wording are near each other. It is what a fresh machine uses, and what tests use.
//   - [OpenAI] calls any server that speaks OpenAI's POST /embeddings: OpenAI, Ollama, vLLM,
//     llama.cpp or a LiteLLM proxy, by base URL. It sends texts in batches, retries 429 and 5xx
//     answers with exponential backoff (honouring Retry-After), and, when pointed at OpenAI
//     without a key, fails at construction with an error that names the variable to set.
//
// Both satisfy store.Embedder, so either becomes a store's semantic index:
//
//	e := embed.NewLocal(nil)
//	s, err := sqlitestore.Open(ctx, "memory.db", &sqlitestore.Options{Config: store.Config{
//		Index: &store.IndexConfig{Embedder: e, Dims: e.Dims(), Fields: []string{"text"}},
//	}})
//
// [FromEnv] picks one from the environment, for commands such as trellis ingest.
package embed
