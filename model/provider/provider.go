// Package provider turns model settings into models: one setting, TRELLIS_MODEL, chooses the
// default model, and TRELLIS_MODEL_<ROLE> (TRELLIS_MODEL_FAST, TRELLIS_MODEL_STRONG, ...) chooses
// the model for a role. With nothing set, every role runs on the offline model.
//
//	roles, err := provider.FromEnv(os.Getenv)
//	summariser := roles.For(model.RoleFast)
//
// A setting reads provider:model[@baseURL]:
//
//	openai:gpt-4o                                      key from OPENAI_API_KEY (base URL: OPENAI_BASE_URL)
//	anthropic:claude-sonnet-4-5                        key from ANTHROPIC_API_KEY (base URL: ANTHROPIC_BASE_URL)
//	openai-compatible:llama3.1@http://localhost:11434/v1  key from OPENAI_COMPATIBLE_API_KEY, optional
//	offline                                            the rule-based offline model
//
// TRELLIS_MODEL_CONNECT_TIMEOUT (a Go duration such as 3s; default 5s) bounds opening a
// connection to any provider's API, so an unreachable host fails fast.
//
// A provider whose key is missing fails here, at start, with an error naming the variable.
package provider

import (
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/anthropic"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/openai"
)

// Setting is the environment variable that chooses the default model; TRELLIS_MODEL_<ROLE>
// chooses the model of one role.
const Setting = "TRELLIS_MODEL"

// ConnectTimeoutSetting is the environment variable that bounds opening a connection to a
// provider's API (a Go duration; unset means model.DefaultConnectTimeout). It names no role.
const ConnectTimeoutSetting = Setting + "_CONNECT_TIMEOUT"

// Options are shared by every model Open builds. The zero value means the providers' defaults.
type Options struct {
	// OpenAI and Anthropic set retries, timeouts and HTTP clients. Their Model, APIKey and
	// BaseURL fields are ignored: those come from the spec and the environment.
	OpenAI    openai.Options
	Anthropic anthropic.Options
	// Offline configures the offline model.
	Offline *offline.Options
}

// Open builds the model a setting names. getenv supplies the keys (os.Getenv in production); the
// setting name is used in errors only. opts may be nil.
func Open(setting, value string, getenv func(string) string, opts *Options) (model.Model, error) {
	if opts == nil {
		opts = &Options{}
	}
	spec, err := model.ParseSpec(setting, value)
	if err != nil {
		return nil, err
	}
	missing := func(key string) error {
		return &model.ConfigError{Setting: key, Problem: "is not set", Err: model.ErrMissingKey,
			Hint: setting + "=" + value + " needs it; export " + key + ", or unset " + setting + " to run on the offline model"}
	}
	switch spec.Provider {
	case "offline":
		return offline.New(opts.Offline), nil
	case "openai":
		o := opts.OpenAI
		o.Provider, o.APIKey = "openai", getenv("OPENAI_API_KEY")
		o.BaseURL = firstNonEmpty(spec.BaseURL, getenv("OPENAI_BASE_URL"))
		if o.APIKey == "" {
			return nil, missing("OPENAI_API_KEY")
		}
		return openai.New(spec.Model, &o)
	case "anthropic":
		o := opts.Anthropic
		o.APIKey = getenv("ANTHROPIC_API_KEY")
		o.BaseURL = firstNonEmpty(spec.BaseURL, getenv("ANTHROPIC_BASE_URL"))
		if o.APIKey == "" {
			return nil, missing("ANTHROPIC_API_KEY")
		}
		return anthropic.New(spec.Model, &o)
	default: // openai-compatible
		o := opts.OpenAI
		o.Provider, o.BaseURL, o.APIKey = "openai-compatible", spec.BaseURL, getenv("OPENAI_COMPATIBLE_API_KEY")
		return openai.New(spec.Model, &o)
	}
}

// FromEnv reads TRELLIS_MODEL and every TRELLIS_MODEL_<ROLE> through getenv and environ-like
// lookups, and returns the models by role. An unset TRELLIS_MODEL means the offline model.
// Role variables are found by trying the well-known roles plus any listed in extraRoles.
func FromEnv(getenv func(string) string, opts *Options, extraRoles ...string) (*model.Roles, error) {
	opts, err := withConnectTimeout(getenv, opts)
	if err != nil {
		return nil, err
	}
	def := strings.TrimSpace(getenv(Setting))
	if def == "" {
		def = "offline"
	}
	m, err := Open(Setting, def, getenv, opts)
	if err != nil {
		return nil, err
	}
	roles := model.NewRoles(m, def)
	seen := map[string]bool{}
	names := append([]string{model.RoleFast, model.RoleStrong, model.RoleVision}, extraRoles...)
	sort.Strings(names[2:])
	for _, role := range names {
		role = strings.ToLower(role)
		if seen[role] || role == model.RoleDefault {
			continue
		}
		seen[role] = true
		key := Setting + "_" + strings.ToUpper(role)
		v := strings.TrimSpace(getenv(key))
		if v == "" {
			continue
		}
		rm, err := Open(key, v, getenv, opts)
		if err != nil {
			return nil, err
		}
		roles = roles.With(role, rm, v)
	}
	return roles, nil
}

// FromEnviron is FromEnv over a list of KEY=VALUE pairs (os.Environ()), which also finds role
// variables for roles the program did not name in advance.
func FromEnviron(environ []string, opts *Options) (*model.Roles, error) {
	env := map[string]string{}
	var extra []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if role, ok := strings.CutPrefix(k, Setting+"_"); ok && role != "" && k != ConnectTimeoutSetting {
			extra = append(extra, strings.ToLower(role))
		}
	}
	return FromEnv(func(k string) string { return env[k] }, opts, extra...)
}

// withConnectTimeout returns opts with the connect timeout of ConnectTimeoutSetting applied to
// the providers that have none of their own; opts itself is not changed.
func withConnectTimeout(getenv func(string) string, opts *Options) (*Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	v := strings.TrimSpace(getenv(ConnectTimeoutSetting))
	if v == "" {
		return &o, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return nil, &model.ConfigError{Setting: ConnectTimeoutSetting, Value: v, Problem: "is not a positive duration",
			Hint: "write it as a Go duration such as 3s or 1500ms, or unset it for the default of " + model.DefaultConnectTimeout.String(), Err: model.ErrConfig}
	}
	if o.OpenAI.ConnectTimeout == 0 {
		o.OpenAI.ConnectTimeout = d
	}
	if o.Anthropic.ConnectTimeout == 0 {
		o.Anthropic.ConnectTimeout = d
	}
	return &o, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
