package rehab

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	kv "github.com/trellis-go/trellis/store"
)

// Config is the specification's OrchestratorConfig.
type Config struct {
	// Model names the agent's model (informational; the model itself is Env.Model).
	Model string `json:"model"`
	// SessionTimeoutMinutes of inactivity end a session (fractions allowed). Zero means 30.
	SessionTimeoutMinutes float64 `json:"session_timeout_minutes"`
	// ContextBudgetTokens bounds the context block. Zero means 4000.
	ContextBudgetTokens int `json:"context_budget_tokens"`
	// MinLinesForPartialRead: below this a read loads everything. Zero means 20.
	MinLinesForPartialRead int `json:"min_lines_for_partial_read"`
	// SummaryModel names the summaries' model (informational).
	SummaryModel string `json:"summary_model"`
	// SummaryTriggerMessageCount messages since the last summary trigger a new one. Zero means 20.
	SummaryTriggerMessageCount int `json:"summary_trigger_message_count"`
}

// SessionTimeout is the idle time that ends a session.
func (c Config) SessionTimeout() time.Duration {
	if c.SessionTimeoutMinutes <= 0 {
		return 30 * time.Minute
	}
	return time.Duration(c.SessionTimeoutMinutes * float64(time.Minute))
}

// SummaryTrigger is the message count that triggers a summary.
func (c Config) SummaryTrigger() int {
	if c.SummaryTriggerMessageCount <= 0 {
		return 20
	}
	return c.SummaryTriggerMessageCount
}

// KB is the knowledge base settings.
func (c Config) KB() kb.Settings {
	return kb.Settings{MinLinesForPartialRead: c.MinLinesForPartialRead, BudgetTokens: c.ContextBudgetTokens}
}

// Env is what a run's nodes and tools use.
type Env struct {
	// Data is the app's tables. Required.
	Data *store.Store
	// Pipeline runs the renovation analysis. Required for trigger_property_analysis.
	Pipeline *reno.Pipeline
	// Model is the agent's model; Summary writes session summaries. Required.
	Model, Summary model.Model
	// Store keeps the portfolio's search documents (embeddings); nil falls back to keywords.
	Store kv.Store
	Config
}

// EnvKey is the configurable value naming the Env of a run.
const EnvKey = "rehab_env"

// Orchestrator holds the compiled graph and the Envs its runs may use.
type Orchestrator struct {
	Graph *graph.Compiled[State]
	def   *Env
	envs  sync.Map
}

// Register makes env usable by runs whose configuration has rehab_env = name.
func (o *Orchestrator) Register(name string, env *Env) { o.envs.Store(name, env) }

// Default is the Env of runs that name none.
func (o *Orchestrator) Default() *Env { return o.def }

// run is what a node or tool knows of its run.
type run struct {
	env  *Env
	who  store.Who
	conv string
	info graph.Info
}

// ErrNoUser is returned by a run with no user in its configuration.
var ErrNoUser = errors.New("rehab: the run has no user (configurable user_id); run it through the server or pass user_id and tenant")

func (o *Orchestrator) run(ctx context.Context) (*run, error) {
	info, _ := graph.InfoFrom(ctx)
	env := o.def
	if name, _ := info.Config[EnvKey].(string); name != "" {
		v, ok := o.envs.Load(name)
		if !ok {
			return nil, fmt.Errorf("rehab: no environment %q is registered", name)
		}
		env = v.(*Env)
	}
	user, _ := info.Config["user_id"].(string)
	tenant, _ := info.Config["tenant"].(string)
	if tenant == "" {
		tenant, _ = info.Config["tenant_id"].(string)
	}
	if user == "" || tenant == "" {
		return nil, ErrNoUser
	}
	conv, _ := info.Config["conversation_id"].(string)
	return &run{env: env, who: store.Who{Tenant: tenant, User: user}, conv: conv, info: info}, nil
}
