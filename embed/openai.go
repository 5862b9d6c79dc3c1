package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultOpenAIBaseURL is OpenAI's API root.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIOptions configure an OpenAI-compatible embeddings client: OpenAI itself, or Ollama,
// vLLM, llama.cpp, LiteLLM or any server that speaks POST {BaseURL}/embeddings. The zero value
// is OpenAI's text-embedding-3-small with the key from OPENAI_API_KEY.
type OpenAIOptions struct {
	// BaseURL is the API root, e.g. http://localhost:11434/v1 for Ollama; empty means OpenAI.
	BaseURL string
	// APIKey is sent as a bearer token. Empty means the value of APIKeyEnv.
	APIKey string
	// APIKeyEnv names the environment variable that holds the key; empty means OPENAI_API_KEY.
	APIKeyEnv string
	// Model is the embedding model; empty means text-embedding-3-small.
	Model string
	// Dimensions, when positive, asks the model for vectors of that length (models that
	// support it shorten their output) and checks every vector returned has it.
	Dimensions int
	// BatchSize is the most texts sent in one request; zero means 128.
	BatchSize int
	// MaxRetries is how many times a request is retried after a 429, a 5xx or a network
	// error; zero means 4, negative means none.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled after each; zero means 500 ms. A
	// Retry-After header from the server takes precedence.
	Backoff time.Duration
	// HTTPClient sends the requests; nil means a client with a 60 s timeout.
	HTTPClient *http.Client
}

// OpenAI is an OpenAI-compatible embeddings client. It speaks the wire format with net/http
// directly, so any base URL works and batching and retries are under this package's control.
type OpenAI struct {
	o   OpenAIOptions
	key string
}

// NewOpenAI returns a client, or ErrMissingKey (naming the variable to set) when the server is
// OpenAI and no key is configured. Self-hosted servers need no key.
func NewOpenAI(opts *OpenAIOptions) (*OpenAI, error) {
	var o OpenAIOptions
	if opts != nil {
		o = *opts
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultOpenAIBaseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return nil, fmt.Errorf("embed: openai: BaseURL %q is not an http(s) URL (write it like http://localhost:11434/v1)", o.BaseURL)
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = "OPENAI_API_KEY"
	}
	if o.Model == "" {
		o.Model = "text-embedding-3-small"
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 128
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 4
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	key := o.APIKey
	if key == "" {
		key = os.Getenv(o.APIKeyEnv)
	}
	if key == "" && o.BaseURL == DefaultOpenAIBaseURL {
		return nil, fmt.Errorf("%w: OpenAI embeddings need a key: set %s (or OpenAIOptions.APIKey), or point BaseURL at a local server such as Ollama, or use embed.NewLocal", ErrMissingKey, o.APIKeyEnv)
	}
	return &OpenAI{o: o, key: key}, nil
}

// Embed implements Embedder. Texts are sent in batches of BatchSize; the vectors come back in
// the order of the texts.
func (c *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.o.BatchSize {
		end := min(start+c.o.BatchSize, len(texts))
		vecs, err := c.batch(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// StatusError is a provider's refusal after retries: the HTTP status and its message.
type StatusError struct {
	Status  int
	Message string
	URL     string
}

func (e *StatusError) Error() string {
	hint := ""
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		hint = " (check the API key)"
	case e.Status == http.StatusNotFound:
		hint = " (check BaseURL and the model name)"
	case e.Status == http.StatusTooManyRequests:
		hint = " (rate limited even after retries; lower BatchSize or raise MaxRetries)"
	}
	return fmt.Sprintf("embed: %s answered %d: %s%s", e.URL, e.Status, e.Message, hint)
}

// Unwrap makes a StatusError match ErrProvider.
func (e *StatusError) Unwrap() error { return ErrProvider }

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

func (c *OpenAI) batch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: c.o.Model, Input: texts, Dimensions: c.o.Dimensions, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	url := c.o.BaseURL + "/embeddings"
	wait := c.o.Backoff
	for attempt := 0; ; attempt++ {
		status, header, data, err := c.send(ctx, url, body)
		last := attempt >= c.o.MaxRetries
		if err == nil && status == http.StatusOK {
			return c.decode(url, data, len(texts))
		}
		if err == nil && !retryable(status) || last {
			if err != nil {
				return nil, fmt.Errorf("embed: %s unreachable after %d attempts: %w", url, attempt+1, err)
			}
			return nil, &StatusError{Status: status, Message: message(data), URL: url}
		}
		d := wait
		if ra, perr := strconv.Atoi(header.Get("Retry-After")); perr == nil && ra >= 0 {
			d = time.Duration(ra) * time.Second
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
		wait *= 2
	}
}

func (c *OpenAI) send(ctx context.Context, url string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, nil, ctx.Err()
		}
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	return resp.StatusCode, resp.Header, data, err
}

func message(data []byte) string {
	var r embeddingResponse
	if json.Unmarshal(data, &r) == nil && r.Error != nil && r.Error.Message != "" {
		return r.Error.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func (c *OpenAI) decode(url string, data []byte, n int) ([][]float32, error) {
	var r embeddingResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %s returned a body that is not an embeddings response: %v", ErrProvider, url, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %s returned %d embeddings for %d inputs", ErrProvider, url, len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("%w: %s returned a bad or repeated index %d", ErrProvider, url, d.Index)
		}
		if c.o.Dimensions > 0 && len(d.Embedding) != c.o.Dimensions {
			return nil, fmt.Errorf("%w: %s returned a %d-dimension vector, %d were asked for (does model %q support the dimensions parameter?)",
				ErrProvider, url, len(d.Embedding), c.o.Dimensions, c.o.Model)
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, errors.Join(ErrProvider, fmt.Errorf("embed: %s returned an empty vector for input %d", url, i))
		}
	}
	return out, nil
}
