package embed

import (
	"fmt"
	"os"
	"strconv"
)

// Environment variables read by FromEnv.
const (
	EnvURL   = "TRELLIS_EMBED_URL"   // base URL of an OpenAI-compatible server; "local" forces Local
	EnvModel = "TRELLIS_EMBED_MODEL" // model name
	EnvDims  = "TRELLIS_EMBED_DIMS"  // vector length
	EnvKey   = "TRELLIS_EMBED_API_KEY"
)

// FromEnv returns the embedder the environment asks for, and its vector length:
// an OpenAI-compatible server when TRELLIS_EMBED_URL is a URL (key in TRELLIS_EMBED_API_KEY,
// model in TRELLIS_EMBED_MODEL, length in TRELLIS_EMBED_DIMS, which is then required), and the
// Local embedder otherwise (length TRELLIS_EMBED_DIMS or 256). The string names the choice for
// logs.
func FromEnv() (Embedder, int, string, error) {
	dims := 0
	if d := os.Getenv(EnvDims); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 {
			return nil, 0, "", fmt.Errorf("embed: %s=%q is not a positive integer", EnvDims, d)
		}
		dims = n
	}
	u := os.Getenv(EnvURL)
	if u == "" || u == "local" {
		l := NewLocal(&LocalOptions{Dims: dims})
		return l, l.Dims(), fmt.Sprintf("local (hashed n-grams, %d dims)", l.Dims()), nil
	}
	if dims == 0 {
		return nil, 0, "", fmt.Errorf("embed: %s is set, so %s must give the model's vector length", EnvURL, EnvDims)
	}
	c, err := NewOpenAI(&OpenAIOptions{BaseURL: u, APIKeyEnv: EnvKey, Model: os.Getenv(EnvModel), Dimensions: dims})
	if err != nil {
		return nil, 0, "", err
	}
	return c, dims, fmt.Sprintf("%s model %s (%d dims)", u, c.o.Model, dims), nil
}
