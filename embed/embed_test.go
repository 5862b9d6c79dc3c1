package embed

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func cos(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

func TestLocalDeterministicAndSimilar(t *testing.T) {
	l := NewLocal(nil)
	ctx := context.Background()
	v, err := l.Embed(ctx, []string{"The kitchen needs new tiles", "the KITCHEN needs new tiles!", "kitchens and tiling", "quarterly revenue forecast", ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 5 || len(v[0]) != 256 {
		t.Fatalf("got %d vectors of %d dims", len(v), len(v[0]))
	}
	if c := cos(v[0], v[1]); c < 0.999 {
		t.Fatalf("case and punctuation changed the vector: cos %.3f", c)
	}
	related, unrelated := cos(v[0], v[2]), cos(v[0], v[3])
	if related <= unrelated+0.1 {
		t.Fatalf("related text cos %.3f is not clearly above unrelated %.3f", related, unrelated)
	}
	if n := cos(v[4], v[4]); math.IsNaN(n) {
		t.Fatal("empty text gave a zero vector")
	}
	again, _ := NewLocal(nil).Embed(ctx, []string{"The kitchen needs new tiles"})
	for i := range again[0] {
		if again[0][i] != v[0][i] {
			t.Fatal("the local embedder is not deterministic")
		}
	}
	if d := NewLocal(&LocalOptions{Dims: 64}).Dims(); d != 64 {
		t.Fatalf("Dims = %d", d)
	}
}

// fakeOpenAI speaks the embeddings wire format; fail holds status codes to answer first.
type fakeOpenAI struct {
	mu      sync.Mutex
	batches []int
	auth    []string
	fail    []int
	dims    int
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req embeddingRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if len(f.fail) > 0 {
		code := f.fail[0]
		f.fail = f.fail[1:]
		f.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(code)
		w.Write([]byte(`{"error":{"message":"slow down","type":"rate_limit"}}`))
		return
	}
	f.batches = append(f.batches, len(req.Input))
	f.mu.Unlock()
	dims := f.dims
	if req.Dimensions > 0 && dims == 0 {
		dims = req.Dimensions
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	// Answer in reverse order: clients must place vectors by index.
	for i := len(req.Input) - 1; i >= 0; i-- {
		v := make([]float32, dims)
		v[0] = float32(len(req.Input[i]))
		resp.Data = append(resp.Data, item{"embedding", i, v})
	}
	json.NewEncoder(w).Encode(resp)
}

func TestOpenAIBatchingAndOrder(t *testing.T) {
	f := &fakeOpenAI{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := NewOpenAI(&OpenAIOptions{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Dimensions: 8, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"}
	vecs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if len(v) != 8 || int(v[0]) != len(texts[i]) {
			t.Fatalf("vector %d = %v, want the one for %q", i, v, texts[i])
		}
	}
	if got := f.batches; len(got) != 3 || got[0] != 3 || got[1] != 3 || got[2] != 1 {
		t.Fatalf("batches %v, want [3 3 1]", got)
	}
	if f.auth[0] != "Bearer sk-test" {
		t.Fatalf("Authorization = %q", f.auth[0])
	}
}

func TestOpenAIRetries(t *testing.T) {
	f := &fakeOpenAI{fail: []int{429, 503}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := NewOpenAI(&OpenAIOptions{BaseURL: srv.URL + "/v1", Dimensions: 4, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("after a 429 and a 503 the third try should succeed: %v", err)
	}
	if len(f.auth) != 3 {
		t.Fatalf("%d requests, want 3", len(f.auth))
	}
	if f.auth[0] != "" {
		t.Fatalf("a keyless local server got Authorization %q", f.auth[0])
	}

	f2 := &fakeOpenAI{fail: []int{429, 429, 429}}
	srv2 := httptest.NewServer(f2)
	defer srv2.Close()
	c2, _ := NewOpenAI(&OpenAIOptions{BaseURL: srv2.URL + "/v1", MaxRetries: 2, Backoff: time.Millisecond})
	_, err = c2.Embed(context.Background(), []string{"x"})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 429 || !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), "slow down") {
		t.Fatalf("rate limited past MaxRetries: %v", err)
	}
	if len(f2.auth) != 3 {
		t.Fatalf("%d requests with MaxRetries 2, want 3", len(f2.auth))
	}
}

func TestOpenAIErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	_, err := NewOpenAI(nil)
	if !errors.Is(err, ErrMissingKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("OpenAI without a key: %v", err)
	}
	t.Setenv("MY_KEY", "")
	if _, err := NewOpenAI(&OpenAIOptions{APIKeyEnv: "MY_KEY"}); err == nil || !strings.Contains(err.Error(), "MY_KEY") {
		t.Fatalf("error should name MY_KEY: %v", err)
	}
	if _, err := NewOpenAI(&OpenAIOptions{BaseURL: "localhost:11434"}); err == nil || !strings.Contains(err.Error(), "http") {
		t.Fatalf("base URL without scheme: %v", err)
	}
	// 401 is not retried and says to check the key.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided"}}`))
	}))
	defer srv.Close()
	c, _ := NewOpenAI(&OpenAIOptions{BaseURL: srv.URL, APIKey: "bad"})
	_, err = c.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "check the API key") || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("401: %v", err)
	}
	// A server that returns the wrong dimension.
	f := &fakeOpenAI{dims: 5}
	srv2 := httptest.NewServer(f)
	defer srv2.Close()
	c2, _ := NewOpenAI(&OpenAIOptions{BaseURL: srv2.URL + "/v1", Dimensions: 8})
	if _, err := c2.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), "5-dimension") {
		t.Fatalf("wrong dimension: %v", err)
	}
	// A body that is not JSON.
	srv3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }))
	defer srv3.Close()
	c3, _ := NewOpenAI(&OpenAIOptions{BaseURL: srv3.URL})
	if _, err := c3.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrProvider) {
		t.Fatalf("HTML body: %v", err)
	}
	// A server that is down: retried, then a clear error.
	c4, _ := NewOpenAI(&OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1", MaxRetries: 1, Backoff: time.Millisecond})
	if _, err := c4.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "unreachable after 2 attempts") {
		t.Fatalf("server down: %v", err)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvURL, "")
	t.Setenv(EnvDims, "")
	e, dims, name, err := FromEnv()
	if err != nil || dims != 256 || !strings.Contains(name, "local") {
		t.Fatalf("default: %T %d %q %v", e, dims, name, err)
	}
	t.Setenv(EnvURL, "http://127.0.0.1:11434/v1")
	if _, _, _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), EnvDims) {
		t.Fatalf("URL without dims: %v", err)
	}
	t.Setenv(EnvDims, "abc")
	if _, _, _, err := FromEnv(); err == nil {
		t.Fatal("bad dims accepted")
	}
	t.Setenv(EnvDims, "768")
	e, dims, _, err = FromEnv()
	if err != nil || dims != 768 {
		t.Fatalf("ollama: %v %d", err, dims)
	}
	if _, ok := e.(*OpenAI); !ok {
		t.Fatalf("got %T", e)
	}
}
