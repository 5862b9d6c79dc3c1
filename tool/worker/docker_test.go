package worker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/tool/worker"
)

// engine is a local server speaking the part of the Docker Engine API the runtime uses. A
// started container is a worker served in this process on a loopback port, published as the
// container's 8080/tcp.
type engine struct {
	mu         sync.Mutex
	networks   map[string]bool
	containers map[string]*fakeContainer
	creates    []map[string]any
}

type fakeContainer struct {
	name    string
	running bool
	srv     *httptest.Server
}

func newEngine(t *testing.T) (*engine, *httptest.Server) {
	e := &engine{networks: map[string]bool{}, containers: map[string]*fakeContainer{}}
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if v != nil {
			_ = json.NewEncoder(w).Encode(v)
		}
	}
	mux.HandleFunc("GET /v1.43/_ping", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("OK")) })
	mux.HandleFunc("GET /v1.43/networks/{name}", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if !e.networks[r.PathValue("name")] {
			reply(w, 404, map[string]string{"message": "network not found"})
			return
		}
		reply(w, 200, map[string]string{"Name": r.PathValue("name"), "Driver": "bridge"})
	})
	mux.HandleFunc("POST /v1.43/networks/create", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Name, Driver string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		e.mu.Lock()
		defer e.mu.Unlock()
		if body.Driver != "bridge" {
			reply(w, 400, map[string]string{"message": "want a bridge"})
			return
		}
		e.networks[body.Name] = true
		reply(w, 201, map[string]string{"Id": "net-" + body.Name})
	})
	mux.HandleFunc("POST /v1.43/containers/create", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		name := r.URL.Query().Get("name")
		e.mu.Lock()
		defer e.mu.Unlock()
		if _, ok := e.containers[name]; ok {
			reply(w, 409, map[string]string{"message": "Conflict. The container name is already in use"})
			return
		}
		hc, _ := body["HostConfig"].(map[string]any)
		if !e.networks[hc["NetworkMode"].(string)] {
			reply(w, 404, map[string]string{"message": "network not found"})
			return
		}
		e.creates = append(e.creates, body)
		e.containers[name] = &fakeContainer{name: name}
		reply(w, 201, map[string]any{"Id": "id-" + name, "Warnings": []string{}})
	})
	mux.HandleFunc("POST /v1.43/containers/{name}/start", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		c, ok := e.containers[r.PathValue("name")]
		if !ok {
			reply(w, 404, map[string]string{"message": "No such container"})
			return
		}
		if c.running {
			reply(w, 304, nil)
			return
		}
		tools, _ := testTools(nil)
		h, _ := worker.Handler(tools)
		c.srv, c.running = httptest.NewServer(h), true
		reply(w, 204, nil)
	})
	mux.HandleFunc("GET /v1.43/containers/{name}/json", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		c, ok := e.containers[r.PathValue("name")]
		if !ok {
			reply(w, 404, map[string]string{"message": "No such container"})
			return
		}
		out := map[string]any{"Id": "id-" + c.name, "Name": "/" + c.name,
			"State": map[string]any{"Running": c.running, "Status": map[bool]string{true: "running", false: "created"}[c.running]}}
		if c.running {
			u, _ := url.Parse(c.srv.URL)
			out["NetworkSettings"] = map[string]any{"Ports": map[string]any{"8080/tcp": []map[string]string{{"HostIp": "127.0.0.1", "HostPort": u.Port()}}}}
		}
		reply(w, 200, out)
	})
	mux.HandleFunc("POST /v1.43/containers/{name}/stop", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		c, ok := e.containers[r.PathValue("name")]
		if !ok {
			reply(w, 404, map[string]string{"message": "No such container"})
			return
		}
		if !c.running {
			reply(w, 304, nil)
			return
		}
		c.srv.Close()
		c.running = false
		reply(w, 204, nil)
	})
	mux.HandleFunc("DELETE /v1.43/containers/{name}", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		c, ok := e.containers[r.PathValue("name")]
		if !ok {
			reply(w, 404, map[string]string{"message": "No such container"})
			return
		}
		if c.running && r.URL.Query().Get("force") != "true" {
			reply(w, 409, map[string]string{"message": "container is running"})
			return
		}
		if c.running {
			c.srv.Close()
		}
		delete(e.containers, c.name)
		reply(w, 204, nil)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return e, srv
}

func (e *engine) names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var n []string
	for k := range e.containers {
		n = append(n, k)
	}
	return n
}

func TestDockerRuntime(t *testing.T) {
	t.Parallel()
	e, srv := newEngine(t)
	d := &worker.Docker{Host: srv.URL, Network: "trellis-test"}
	if !d.Reachable(context.Background()) {
		t.Fatal("the engine is not reachable")
	}
	// A stopped container of the same name is left from an earlier run: it is started again.
	e.networks["trellis-test"] = true
	e.containers["prop_0"] = &fakeContainer{name: "prop_0"}

	p := worker.NewPool(d, nil)
	spec := worker.Spec{Name: "prop", Image: "trellis/property:latest", PoolSize: 2, MemoryLimit: 256 << 20, Env: []string{"REALTY_API_KEY=k"}}
	if err := p.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if s, _ := p.Schema("prop"); len(s.Tools) != 5 {
		t.Fatalf("schema %+v", s)
	}
	for range 3 {
		res, err := p.Execute(context.Background(), "prop", "echo", json.RawMessage(`{"text":"hi"}`), 0)
		if err != nil || res.Content != "hi" {
			t.Fatalf("%+v %v", res, err)
		}
	}
	waitFor(t, "the pool to refill", func() bool { st, _ := p.Stats("prop"); return st.Idle == 2 && st.Replaced == 3 })
	e.mu.Lock()
	if len(e.creates) != 4 { // prop_1 at the start (prop_0 existed), then one per call
		t.Errorf("%d containers created, want 4", len(e.creates))
	}
	for _, c := range e.creates {
		hc := c["HostConfig"].(map[string]any)
		if hc["Memory"].(float64) != 256<<20 || hc["NetworkMode"] != "trellis-test" || c["Image"] != "trellis/property:latest" {
			t.Errorf("create body %v", c)
		}
		env, _ := json.Marshal(c["Env"])
		if !strings.Contains(string(env), "REALTY_API_KEY=k") || strings.Contains(string(env), "ANTHROPIC") {
			t.Errorf("container env %s", env)
		}
	}
	e.mu.Unlock()
	if err := p.StopAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := e.names(); len(left) != 0 {
		t.Errorf("containers left after StopAll: %v", left)
	}
}

func TestDockerEngineErrors(t *testing.T) {
	t.Parallel()
	_, srv := newEngine(t)
	d := &worker.Docker{Host: srv.URL}
	p := worker.NewPool(d, nil)
	defer p.StopAll(context.Background())
	if err := p.Start(context.Background(), worker.Spec{Name: "x"}); err == nil || !strings.Contains(err.Error(), "no image") {
		t.Errorf("no image: %v", err)
	}
	if (&worker.Docker{Host: "http://127.0.0.1:1"}).Reachable(context.Background()) {
		t.Error("nothing listens on port 1")
	}
}
