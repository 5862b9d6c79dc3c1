package rehab

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/provider"
	"github.com/trellis-go/trellis/server"
)

// Settings are the app's settings (server.AppSettings keys), read by `trellis serve` from
// TRELLIS_APP_REHAB_<KEY> and from --app-config {"rehab": {"<key>": "<value>"}}. The
// specification's OrchestratorConfig keys keep its ORCHESTRATOR__ prefix.
const (
	SettingModel               = "orchestrator__model"
	SettingSessionTimeout      = "orchestrator__session_timeout_minutes"
	SettingContextBudget       = "orchestrator__context_budget_tokens"
	SettingMinLinesPartialRead = "orchestrator__min_lines_for_partial_read"
	SettingSummaryModel        = "orchestrator__summary_model"
	SettingSummaryTriggerCount = "orchestrator__summary_trigger_message_count"
	SettingListingBaseURL      = "listing_base_url"
	settingOrchestratorPrefix  = "orchestrator__"
	settingEnvPrefix           = "TRELLIS_APP_REHAB_"
	defaultSessionTimeout      = 30
	defaultContextBudget       = 4000
	defaultMinLinesPartialRead = 20
	defaultSummaryTriggerCount = 20
	minContextBudget           = 500
	maxSessionTimeoutMinutes   = 7 * 24 * 60
	maxSummaryTriggerCount     = 10000
	maxMinLinesForPartialRead  = 10000
)

// OrchestratorKeys are the specification's OrchestratorConfig keys, as settings.
var OrchestratorKeys = []string{SettingModel, SettingSessionTimeout, SettingContextBudget, SettingMinLinesPartialRead, SettingSummaryModel, SettingSummaryTriggerCount}

// SettingError is a setting the app cannot start with; its message names the key (as the
// environment and --app-config write it), the value, what is wrong and what to write.
type SettingError struct {
	Key, Value, Problem string
}

func (e *SettingError) Error() string {
	upper := strings.ToUpper(e.Key)
	return fmt.Sprintf("rehab: setting %s (%s%s, or %q in --app-config's \"rehab\") = %q: %s", upper, settingEnvPrefix, upper, e.Key, e.Value, e.Problem)
}

// Resolved is what the settings give: the orchestrator's configuration, the models they name
// (nil where they name none) and the listing site.
type Resolved struct {
	Config         Config
	Model, Summary model.Model
	ListingBaseURL string
}

// ReadSettings reads and validates the app's settings over base (set fields of base are kept
// unless a setting overrides them). An unknown ORCHESTRATOR__ key is an error, so a misspelt
// key does not go unnoticed. getenv supplies the models' API keys; nil means the app's own
// settings (OPENAI_API_KEY is the setting openai_api_key, TRELLIS_APP_REHAB_OPENAI_API_KEY):
// the app reads nothing from the process's environment.
func ReadSettings(s server.AppSettings, base Config, getenv func(string) string) (*Resolved, error) {
	if getenv == nil {
		getenv = func(name string) string { return s.Get(server.SettingKey(name)) }
	}
	out := &Resolved{Config: base}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, settingOrchestratorPrefix) && !contains(OrchestratorKeys, k) {
			return nil, &SettingError{Key: k, Value: s[k], Problem: "is not a setting of the orchestrator; the keys are " + strings.ToUpper(strings.Join(OrchestratorKeys, ", "))}
		}
	}
	num := func(key string, lo, hi float64, integer bool, what string) (float64, bool, error) {
		raw, ok := s[key]
		if !ok {
			return 0, false, nil
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || v < lo || v > hi || integer && v != float64(int(v)) {
			return 0, false, &SettingError{Key: key, Value: raw, Problem: what}
		}
		return v, true, nil
	}
	if v, ok, err := num(SettingSessionTimeout, 0.001, maxSessionTimeoutMinutes, false, fmt.Sprintf("want the minutes of inactivity that end a session, a number above 0 and at most %d (default %d)", maxSessionTimeoutMinutes, defaultSessionTimeout)); err != nil {
		return nil, err
	} else if ok {
		out.Config.SessionTimeoutMinutes = v
	}
	if v, ok, err := num(SettingContextBudget, minContextBudget, 1_000_000, true, fmt.Sprintf("want a whole number of tokens from %d (default %d)", minContextBudget, defaultContextBudget)); err != nil {
		return nil, err
	} else if ok {
		out.Config.ContextBudgetTokens = int(v)
	}
	if v, ok, err := num(SettingMinLinesPartialRead, 1, maxMinLinesForPartialRead, true, fmt.Sprintf("want a whole number of lines from 1 (default %d)", defaultMinLinesPartialRead)); err != nil {
		return nil, err
	} else if ok {
		out.Config.MinLinesForPartialRead = int(v)
	}
	if v, ok, err := num(SettingSummaryTriggerCount, 2, maxSummaryTriggerCount, true, fmt.Sprintf("want a whole number of messages from 2 (default %d)", defaultSummaryTriggerCount)); err != nil {
		return nil, err
	} else if ok {
		out.Config.SummaryTriggerMessageCount = int(v)
	}
	for _, m := range []struct {
		key  string
		dst  *model.Model
		name *string
	}{{SettingModel, &out.Model, &out.Config.Model}, {SettingSummaryModel, &out.Summary, &out.Config.SummaryModel}} {
		raw, ok := s[m.key]
		if !ok {
			continue
		}
		v := strings.TrimSpace(raw)
		if v != "" && !strings.Contains(v, ":") && v != "offline" {
			return nil, &SettingError{Key: m.key, Value: raw, Problem: "name the model with its provider, e.g. openai:" + v + ", anthropic:claude-sonnet-4-5, openai-compatible:llama3.1@http://localhost:11434/v1, or offline"}
		}
		mm, err := provider.Open(strings.ToUpper(m.key), v, getenv, nil)
		if err != nil {
			return nil, &SettingError{Key: m.key, Value: raw, Problem: err.Error()}
		}
		*m.dst, *m.name = mm, v
	}
	if raw, ok := s[SettingListingBaseURL]; ok {
		v := strings.TrimSpace(raw)
		if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return nil, &SettingError{Key: SettingListingBaseURL, Value: raw, Problem: "want the listing site's base URL, e.g. https://www.idealista.pt"}
		}
		out.ListingBaseURL = strings.TrimRight(v, "/")
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
