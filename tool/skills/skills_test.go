package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/skills"
	"github.com/trellis-go/trellis/tool/worker"
)

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const propertySkill = `---
name: property
description: Finds homes for sale.
image: trellis/property:latest   # the worker image
pool_size: 3
memory_limit: 256m
timeout: 20s
---

# Property search

Documentation for people.

## System prompt

Search with search_properties.

## Notes

Not part of the prompt.
`

func TestParseAndDiscover(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "property"), "SKILL.md", propertySkill)
	write(t, filepath.Join(root, "property"), "AGENT.md", "You are Casa, a property assistant.\n")
	write(t, filepath.Join(root, "property"), ".env", "# the skill's keys\nREALTY_API_KEY=\"abc123\"\nexport REGION=us\n")
	write(t, filepath.Join(root, "weather"), "SKILL.md", "---\nname: weather\ncommand: ./weather --port 0\n---\nTell the weather.\n")
	write(t, filepath.Join(root, "notes"), "README.md", "not a skill")
	ms, err := skills.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("%d skills", len(ms))
	}
	p := ms[0]
	if p.Name != "property" || p.Image != "trellis/property:latest" || p.PoolSize != 3 || p.MemoryLimit != 256<<20 || p.Timeout != 20*time.Second {
		t.Errorf("manifest %+v", p)
	}
	if p.Prompt != "Search with search_properties." || !strings.Contains(p.Body, "Documentation for people.") {
		t.Errorf("prompt %q body %q", p.Prompt, p.Body)
	}
	if p.Agent != "You are Casa, a property assistant." {
		t.Errorf("agent %q", p.Agent)
	}
	spec, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Env, []string{"REALTY_API_KEY=abc123", "REGION=us"}) || spec.PoolSize != 3 {
		t.Errorf("spec %+v", spec)
	}
	w := ms[1]
	if w.Name != "weather" || !slices.Equal(w.Command, []string{"./weather", "--port", "0"}) || w.Prompt != "Tell the weather." {
		t.Errorf("weather %+v", w)
	}
	if s, _ := w.Spec(); s.PoolSize != 2 || s.Env != nil {
		t.Errorf("weather spec %+v", s)
	}
}

func TestBadManifestsNameFileAndField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, field, want string }{
		{"no front matter", "", "must start with a front matter"},
		{"---\nname: x\nimage: i\n", "", "not closed"},
		{"---\nimage: i\n---\n", "name", "missing"},
		{"---\nname: Bad Name\nimage: i\n---\n", "name", "not a valid name"},
		{"---\nname: x\n---\n", "image", "missing"},
		{"---\nname: x\nimage: i\npool_size: many\n---\n", "pool_size", "not a pool size"},
		{"---\nname: x\nimage: i\nmemory_limit: lots\n---\n", "memory_limit", "not a memory size"},
		{"---\nname: x\nimage: i\ntimeout: -3\n---\n", "timeout", "not a timeout"},
		{"---\nname: x\nimage: i\ncolour: red\n---\n", "colour", "unknown field"},
		{"---\nname: x\nname: y\nimage: i\n---\n", "name", "given twice"},
		{"---\nname: x\nimage: i\nenv_file: missing.env\n---\n", "env_file", "cannot be read"},
		{"---\nname: x\n  image: i\n---\n", "", "nested values"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "SKILL.md")
		_, err := skills.Parse(file, []byte(c.text))
		var me *skills.ManifestError
		if !errors.As(err, &me) {
			t.Errorf("%q: err %v, want a ManifestError", c.text, err)
			continue
		}
		if me.File != file || me.Field != c.field || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%q: %v (field %q), want field %q and %q", c.text, err, me.Field, c.field, c.want)
		}
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "a"), "SKILL.md", "---\nname: same\nimage: i\n---\n")
	write(t, filepath.Join(root, "b"), "SKILL.md", "---\nname: same\nimage: i\n---\n")
	if _, err := skills.Discover(root); err == nil || !strings.Contains(err.Error(), "also the name of") {
		t.Errorf("a name used twice: %v", err)
	}
	if _, err := skills.Discover(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no skill") {
		t.Errorf("no skills: %v", err)
	}
	write(t, filepath.Join(root, "env"), "bad.env", "JUST A LINE\n")
	if _, err := skills.ReadEnvFile(filepath.Join(root, "env", "bad.env")); err == nil || !strings.Contains(err.Error(), "bad.env:1") {
		t.Errorf("bad env file: %v", err)
	}
}

// inProcess runs each skill's workers in this process: the tools depend on the skill's name.
type inProcess struct{}

type textArgs struct {
	Text string `json:"text"`
}

func (inProcess) Start(ctx context.Context, spec worker.Spec, name string) (worker.Instance, error) {
	var tools []tool.Tool
	switch spec.Name {
	case "upper":
		tools = append(tools, tool.Must(tool.New("shout", "Upper-cases.", func(ctx context.Context, a textArgs) (string, error) {
			return strings.ToUpper(a.Text) + " from " + name, nil
		})))
	case "lower":
		tools = append(tools, tool.Must(tool.New("whisper", "Lower-cases.", func(ctx context.Context, a textArgs) (string, error) {
			return strings.ToLower(a.Text) + " from " + name, nil
		})))
	default:
		tools = append(tools, tool.Must(tool.New("shout", "Clashes.", func(ctx context.Context, a textArgs) (string, error) { return "", nil })))
	}
	h, err := worker.Handler(tools)
	if err != nil {
		return nil, err
	}
	return &inst{name: name, srv: httptest.NewServer(h)}, nil
}

type inst struct {
	name string
	srv  *httptest.Server
}

func (i *inst) Name() string                   { return i.name }
func (i *inst) URL() string                    { return i.srv.URL }
func (i *inst) Stop(ctx context.Context) error { i.srv.Close(); return nil }

func TestRegistryMergesAndRoutes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "a-upper"), "SKILL.md", "---\nname: upper\nimage: u\npool_size: 1\n---\n## System prompt\nShout when asked.\n")
	write(t, filepath.Join(root, "a-upper"), "AGENT.md", "You are Echo.")
	write(t, filepath.Join(root, "b-lower"), "SKILL.md", "---\nname: lower\nimage: l\npool_size: 1\n---\nWhisper when asked.\n")
	pool := worker.NewPool(inProcess{}, nil)
	defer pool.StopAll(context.Background())
	r, err := skills.Load(context.Background(), root, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Names(), []string{"upper", "lower"}) || !slices.Equal(r.ToolNames(), []string{"shout", "whisper"}) {
		t.Errorf("skills %v tools %v", r.Names(), r.ToolNames())
	}
	if r.Identity() != "You are Echo." {
		t.Errorf("identity %q", r.Identity())
	}
	if sp := r.SystemPrompt(); !strings.Contains(sp, "## Skill: upper\n\nShout when asked.") || !strings.Contains(sp, "## Skill: lower\n\nWhisper when asked.") {
		t.Errorf("system prompt %q", sp)
	}
	res, err := r.Execute(context.Background(), "whisper", json.RawMessage(`{"text":"HeLLo"}`))
	if err != nil || !strings.HasPrefix(res.Content, "hello from lower_") {
		t.Errorf("whisper: %+v %v", res, err)
	}
	ex, err := tool.NewExecutor(r.Tools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := ex.Run(context.Background(), []message.ToolCall{{ID: "1", Name: "shout", Arguments: json.RawMessage(`{"text":"hi"}`)}})
	if !strings.HasPrefix(out[0].Message.Text(), "HI from upper_") {
		t.Errorf("shout through the executor: %q", out[0].Message.Text())
	}
	if owner, _ := r.Owner("shout"); owner != "upper" {
		t.Errorf("owner %q", owner)
	}
	if _, err := r.Execute(context.Background(), "nope", nil); !errors.Is(err, tool.ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}

	write(t, filepath.Join(root, "c-clash"), "SKILL.md", "---\nname: clash\nimage: c\npool_size: 1\n---\n")
	pool2 := worker.NewPool(inProcess{}, nil)
	defer pool2.StopAll(context.Background())
	if _, err := skills.Load(context.Background(), root, pool2); err == nil || !strings.Contains(err.Error(), `"shout" is served by both`) {
		t.Errorf("a tool in two skills: %v", err)
	}
}
