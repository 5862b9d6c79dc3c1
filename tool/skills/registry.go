package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/worker"
)

// Skill is a loaded skill: its manifest and the tools its workers serve.
type Skill struct {
	Manifest
	Tools []model.ToolSpec
}

// Registry is the loaded skills: their merged tools, each routed to the skill that owns it.
// Safe for concurrent use once loaded.
type Registry struct {
	pool   *worker.Pool
	skills []Skill
	owner  map[string]string // tool -> skill
	tools  []tool.Tool
}

// Spec returns what the pool needs to run a skill's workers; the env file's lines are the whole
// environment.
func (m Manifest) Spec() (worker.Spec, error) {
	env, err := ReadEnvFile(m.EnvFile)
	if err != nil {
		return worker.Spec{}, err
	}
	size := m.PoolSize
	if size == 0 {
		size = 2
	}
	return worker.Spec{Name: m.Name, Image: m.Image, Command: m.Command, PoolSize: size,
		MemoryLimit: m.MemoryLimit, Timeout: m.Timeout, Env: env}, nil
}

// Load discovers the skills under root, starts each one's workers in pool and reads their tools.
// On an error the workers already started are left to the caller's pool.StopAll.
func Load(ctx context.Context, root string, pool *worker.Pool) (*Registry, error) {
	ms, err := Discover(root)
	if err != nil {
		return nil, err
	}
	return LoadManifests(ctx, ms, pool)
}

// LoadManifests is [Load] for manifests already read.
func LoadManifests(ctx context.Context, ms []Manifest, pool *worker.Pool) (*Registry, error) {
	r := &Registry{pool: pool, owner: map[string]string{}}
	for _, m := range ms {
		spec, err := m.Spec()
		if err != nil {
			return nil, err
		}
		if err := pool.Start(ctx, spec); err != nil {
			return nil, fmt.Errorf("skills: starting the workers of %q: %w", m.Name, err)
		}
		schema, err := pool.Schema(m.Name)
		if err != nil {
			return nil, err
		}
		sk := Skill{Manifest: m}
		for _, spec := range schema.Tools {
			if prev, ok := r.owner[spec.Name]; ok {
				return nil, fmt.Errorf("skills: tool %q is served by both %q and %q; a tool name must belong to one skill", spec.Name, prev, m.Name)
			}
			t, err := r.proxy(m, spec)
			if err != nil {
				return nil, fmt.Errorf("skills: tool %q of %q: %w", spec.Name, m.Name, err)
			}
			r.owner[spec.Name] = m.Name
			r.tools = append(r.tools, t)
			sk.Tools = append(sk.Tools, spec)
		}
		r.skills = append(r.skills, sk)
	}
	return r, nil
}

// proxy is a tool that runs on the skill's workers; the arguments are checked here first.
func (r *Registry) proxy(m Manifest, spec model.ToolSpec) (tool.Tool, error) {
	if len(spec.Parameters) == 0 {
		spec.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	skill := m.Name
	return tool.NewRaw(spec, func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		return r.execute(ctx, skill, spec.Name, args)
	})
}

func (r *Registry) execute(ctx context.Context, skill, name string, args json.RawMessage) (*tool.Result, error) {
	res, err := r.pool.Execute(ctx, skill, name, args, 0)
	if err != nil {
		return nil, err
	}
	return &tool.Result{Content: res.Content, Structured: res.Structured, IsError: res.IsError}, nil
}

// Execute runs a tool on the workers of the skill that owns it.
func (r *Registry) Execute(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
	skill, ok := r.owner[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q; the skills' tools are %s", tool.ErrUnknownTool, name, strings.Join(r.ToolNames(), ", "))
	}
	return r.execute(ctx, skill, name, args)
}

// Owner names the skill that owns a tool.
func (r *Registry) Owner(name string) (string, bool) {
	s, ok := r.owner[name]
	return s, ok
}

// Tools returns every skill's tools as tool.Tool, each routed to its skill's workers.
func (r *Registry) Tools() []tool.Tool { return slices.Clone(r.tools) }

// ToolNames lists the tools, in skill order.
func (r *Registry) ToolNames() []string {
	var n []string
	for _, s := range r.skills {
		for _, t := range s.Tools {
			n = append(n, t.Name)
		}
	}
	return n
}

// Specs returns the merged tool definitions, as the model is shown them.
func (r *Registry) Specs() []model.ToolSpec {
	var out []model.ToolSpec
	for _, s := range r.skills {
		out = append(out, s.Tools...)
	}
	return out
}

// Skills returns the loaded skills, in discovery order.
func (r *Registry) Skills() []Skill { return slices.Clone(r.skills) }

// Names lists the skills' names.
func (r *Registry) Names() []string {
	n := make([]string, len(r.skills))
	for i, s := range r.skills {
		n[i] = s.Name
	}
	return n
}

// Identity joins the AGENT.md of every skill that has one: the agent's identity, first in every
// context.
func (r *Registry) Identity() string {
	var parts []string
	for _, s := range r.skills {
		if s.Agent != "" {
			parts = append(parts, s.Agent)
		}
	}
	return strings.Join(parts, "\n\n")
}

// SystemPrompt joins the skills' system prompts, each under its skill's name.
func (r *Registry) SystemPrompt() string {
	var parts []string
	for _, s := range r.skills {
		if s.Prompt != "" {
			parts = append(parts, "## Skill: "+s.Name+"\n\n"+s.Prompt)
		}
	}
	return strings.Join(parts, "\n\n")
}
