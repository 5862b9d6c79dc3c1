package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Docker runs each worker as a container through the Docker Engine API: on a bridge network
// (created when missing), with the skill's memory limit, its env file as the container's
// environment, and port 8080 published on a loopback port of the host. An existing container
// of the same name is reused when running and started when stopped.
type Docker struct {
	// Host is the Engine API's address: "unix:///var/run/docker.sock" (the default) or an
	// http:// URL.
	Host string
	// APIVersion prefixes the routes ("v1.43" by default).
	APIVersion string
	// Network is the bridge network the workers join; "trellis-workers" by default.
	Network string
	// ByName, when true, reaches a worker as http://<container name>:8080 (the server runs in
	// a container on the same network) instead of through its published loopback port.
	ByName bool
	// Client, when set, talks to the engine (tests); otherwise one is built for Host.
	Client *http.Client

	once    sync.Once
	base    string
	hc      *http.Client
	netOnce sync.Mutex
	netDone bool
}

func (d *Docker) init() {
	d.once.Do(func() {
		host := d.Host
		if host == "" {
			host = "unix:///var/run/docker.sock"
		}
		ver := d.APIVersion
		if ver == "" {
			ver = "v1.43"
		}
		d.hc = d.Client
		if strings.HasPrefix(host, "unix://") {
			sock := strings.TrimPrefix(host, "unix://")
			if d.hc == nil {
				d.hc = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, "unix", sock)
				}}}
			}
			d.base = "http://docker/" + ver
		} else {
			if d.hc == nil {
				d.hc = &http.Client{}
			}
			d.base = strings.TrimRight(host, "/") + "/" + ver
		}
	})
}

func (d *Docker) network() string {
	if d.Network == "" {
		return "trellis-workers"
	}
	return d.Network
}

// Reachable reports whether an engine answers GET /_ping.
func (d *Docker) Reachable(ctx context.Context) bool {
	d.init()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	code, _, err := d.do(ctx, http.MethodGet, "/_ping", nil)
	return err == nil && code == http.StatusOK
}

func (d *Docker) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("docker engine: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, out, err
}

func engineError(op string, code int, body []byte) error {
	var m struct{ Message string }
	_ = json.Unmarshal(body, &m)
	if m.Message == "" {
		m.Message = strings.TrimSpace(string(body))
	}
	return fmt.Errorf("docker engine: %s answered %d: %s", op, code, m.Message)
}

func (d *Docker) ensureNetwork(ctx context.Context) error {
	d.netOnce.Lock()
	defer d.netOnce.Unlock()
	if d.netDone {
		return nil
	}
	code, body, err := d.do(ctx, http.MethodGet, "/networks/"+url.PathEscape(d.network()), nil)
	if err != nil {
		return err
	}
	if code == http.StatusNotFound {
		code, body, err = d.do(ctx, http.MethodPost, "/networks/create", map[string]any{
			"Name": d.network(), "Driver": "bridge", "CheckDuplicate": true,
			"Labels": map[string]string{"trellis.worker": "true"}})
		if err != nil {
			return err
		}
		if code != http.StatusCreated && code != http.StatusConflict {
			return engineError("creating the network", code, body)
		}
	} else if code != http.StatusOK {
		return engineError("inspecting the network", code, body)
	}
	d.netDone = true
	return nil
}

type containerJSON struct {
	ID    string `json:"Id"`
	State struct {
		Running bool
		Status  string
	}
	NetworkSettings struct {
		Ports map[string][]struct {
			HostIP   string `json:"HostIp"`
			HostPort string
		}
	}
}

func (d *Docker) inspect(ctx context.Context, name string) (*containerJSON, int, error) {
	code, body, err := d.do(ctx, http.MethodGet, "/containers/"+url.PathEscape(name)+"/json", nil)
	if err != nil {
		return nil, 0, err
	}
	if code != http.StatusOK {
		return nil, code, engineError("inspecting "+name, code, body)
	}
	var c containerJSON
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, code, fmt.Errorf("docker engine: inspecting %s: %w", name, err)
	}
	return &c, code, nil
}

// Start creates (or reuses) and starts the container called name.
func (d *Docker) Start(ctx context.Context, spec Spec, name string) (Instance, error) {
	d.init()
	if spec.Image == "" {
		return nil, fmt.Errorf("skill %q has no image to start a container from", spec.Name)
	}
	if err := d.ensureNetwork(ctx); err != nil {
		return nil, err
	}
	env := append([]string{}, spec.Env...)
	env = append(env, EnvName+"="+spec.Name, EnvAddr+"=:8080")
	create := map[string]any{
		"Image":        spec.Image,
		"Env":          env,
		"ExposedPorts": map[string]any{"8080/tcp": map[string]any{}},
		"Labels":       map[string]string{"trellis.worker": spec.Name},
		"HostConfig": map[string]any{
			"Memory":       spec.MemoryLimit,
			"NetworkMode":  d.network(),
			"PortBindings": map[string]any{"8080/tcp": []map[string]string{{"HostIp": "127.0.0.1", "HostPort": ""}}},
		},
	}
	code, body, err := d.do(ctx, http.MethodPost, "/containers/create?name="+url.QueryEscape(name), create)
	if err != nil {
		return nil, err
	}
	switch code {
	case http.StatusCreated:
	case http.StatusConflict: // it exists: reuse it, started if stopped
	default:
		return nil, engineError("creating "+name, code, body)
	}
	c, _, err := d.inspect(ctx, name)
	if err != nil {
		return nil, err
	}
	if !c.State.Running {
		code, body, err := d.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(name)+"/start", nil)
		if err != nil {
			return nil, err
		}
		if code != http.StatusNoContent && code != http.StatusNotModified {
			return nil, engineError("starting "+name, code, body)
		}
		if c, _, err = d.inspect(ctx, name); err != nil {
			return nil, err
		}
	}
	inst := &container{d: d, name: name}
	if d.ByName {
		inst.url = "http://" + name + ":8080"
	} else {
		b := c.NetworkSettings.Ports["8080/tcp"]
		if len(b) == 0 || b[0].HostPort == "" {
			_ = inst.Stop(ctx)
			return nil, fmt.Errorf("docker engine: %s has no published port for 8080/tcp", name)
		}
		host := b[0].HostIP
		if host == "" || host == "0.0.0.0" {
			host = "127.0.0.1"
		}
		inst.url = "http://" + net.JoinHostPort(host, b[0].HostPort)
	}
	return inst, nil
}

type container struct {
	d         *Docker
	name, url string
	once      sync.Once
	err       error
}

func (c *container) Name() string { return c.name }
func (c *container) URL() string  { return c.url }

// Stop stops the container (five seconds' grace) and removes it.
func (c *container) Stop(ctx context.Context) error {
	c.once.Do(func() {
		p := "/containers/" + url.PathEscape(c.name)
		code, body, err := c.d.do(ctx, http.MethodPost, p+"/stop?t=5", nil)
		if err != nil {
			c.err = err
			return
		}
		if code != http.StatusNoContent && code != http.StatusNotModified && code != http.StatusNotFound {
			c.err = engineError("stopping "+c.name, code, body)
		}
		code, body, err = c.d.do(ctx, http.MethodDelete, p+"?force=true", nil)
		if err != nil {
			c.err = err
			return
		}
		if code != http.StatusNoContent && code != http.StatusNotFound {
			c.err = engineError("removing "+c.name, code, body)
		}
	})
	return c.err
}
