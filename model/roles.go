package model

import (
	"fmt"
	"net/url"
	"strings"
)

// Well-known roles. An application asks for a model by what the call needs ("use the fast model
// for summaries") and the configuration decides which model that is.
const (
	RoleDefault = "default" // everything without a more specific role
	RoleFast    = "fast"    // cheap and quick: summaries, titles, hints, routing
	RoleStrong  = "strong"  // the most capable: planning, agents, final answers
	RoleVision  = "vision"  // reads images: photos of rooms, items, labels
)

// Roles maps role names to models. A role without its own model falls back to the default.
// Build it once at start; it is safe for concurrent reads.
type Roles struct {
	def    entry
	byRole map[string]entry
}

type entry struct {
	model Model
	spec  string
}

// NewRoles returns Roles whose default is def, described by spec (for logs, e.g. "offline").
func NewRoles(def Model, spec string) *Roles {
	return &Roles{def: entry{def, spec}, byRole: map[string]entry{}}
}

// With returns a copy of r in which role uses m. Setting RoleDefault replaces the default.
func (r *Roles) With(role string, m Model, spec string) *Roles {
	out := &Roles{def: r.def, byRole: make(map[string]entry, len(r.byRole)+1)}
	for k, v := range r.byRole {
		out.byRole[k] = v
	}
	role = strings.ToLower(role)
	if role == RoleDefault || role == "" {
		out.def = entry{m, spec}
	} else {
		out.byRole[role] = entry{m, spec}
	}
	return out
}

// Map returns a copy of r in which every role's model is f of it (the default's too), with the
// same specs: the server uses it to wrap each app's models with telemetry and to give the
// offline model an app's domain pack. A role that fell back to the default still does.
func (r *Roles) Map(f func(Model) Model) *Roles {
	out := &Roles{def: entry{f(r.def.model), r.def.spec}, byRole: make(map[string]entry, len(r.byRole))}
	for k, v := range r.byRole {
		out.byRole[k] = entry{f(v.model), v.spec}
	}
	return out
}

// For returns the model for role, or the default when role has none of its own.
func (r *Roles) For(role string) Model {
	if e, ok := r.byRole[strings.ToLower(role)]; ok {
		return e.model
	}
	return r.def.model
}

// Default returns the default model.
func (r *Roles) Default() Model { return r.def.model }

// Spec returns the setting the model for role came from, for logs and the UI.
func (r *Roles) Spec(role string) string {
	if e, ok := r.byRole[strings.ToLower(role)]; ok {
		return e.spec
	}
	return r.def.spec
}

// Spec is a parsed model setting such as "openai:gpt-4o" or
// "openai-compatible:llama3.1@http://localhost:11434/v1".
type Spec struct {
	Provider string // "openai", "anthropic", "openai-compatible", "offline"
	Model    string // the provider's model name; may be empty for "offline"
	BaseURL  string // an explicit endpoint, given after '@'
}

func (s Spec) String() string {
	out := s.Provider
	if s.Model != "" {
		out += ":" + s.Model
	}
	if s.BaseURL != "" {
		out += "@" + s.BaseURL
	}
	return out
}

// Providers lists the provider names a Spec may use.
var Providers = []string{"openai", "anthropic", "openai-compatible", "offline"}

// ParseSpec parses "provider:model[@baseURL]". The setting name is used in errors only.
func ParseSpec(setting, value string) (Spec, error) {
	v := strings.TrimSpace(value)
	bad := func(problem string) (Spec, error) {
		return Spec{}, &ConfigError{Setting: setting, Value: value, Problem: problem,
			Hint: "use provider:model, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, openai-compatible:llama3.1@http://localhost:11434/v1, or offline"}
	}
	if v == "" {
		return bad("is empty")
	}
	provider, rest, _ := strings.Cut(v, ":")
	// "openai-compatible:model@http://host" — the model part ends at the first '@'.
	modelName, base, hasBase := strings.Cut(rest, "@")
	s := Spec{Provider: strings.ToLower(strings.TrimSpace(provider)), Model: strings.TrimSpace(modelName), BaseURL: strings.TrimSpace(base)}
	known := false
	for _, p := range Providers {
		known = known || p == s.Provider
	}
	if !known {
		return bad(fmt.Sprintf("unknown provider %q (known: %s)", s.Provider, strings.Join(Providers, ", ")))
	}
	if s.Provider != "offline" && s.Model == "" {
		return bad("names no model after the provider")
	}
	if hasBase {
		u, err := url.Parse(s.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad(fmt.Sprintf("base URL %q is not an http(s) URL", s.BaseURL))
		}
	}
	if s.Provider == "openai-compatible" && s.BaseURL == "" {
		return bad("openai-compatible needs a base URL after '@'")
	}
	return s, nil
}
