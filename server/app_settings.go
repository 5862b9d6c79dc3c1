package server

import (
	"fmt"
	"slices"
	"strings"
)

// AppSettings are one application's own settings: the base URLs and keys of the external APIs
// it calls, and switches of its own. `trellis serve` reads them once, from the environment
// (TRELLIS_APP_<APP>_<KEY>, such as TRELLIS_APP_LISTFORGE_EBAY_CLIENT_ID) and from
// --app-config, a JSON file of {"<app>": {"<key>": "<value>"}}; an application reads them from
// [AppDeps.Settings] and never from the environment. Keys are lower case with '_' between
// words ("ebay_client_id").
type AppSettings map[string]string

// Get returns the value of key, or "" when it is not set.
func (s AppSettings) Get(key string) string { return s[key] }

// Or returns the value of key, or def when it is not set or empty.
func (s AppSettings) Or(key, def string) string {
	if v := s[key]; v != "" {
		return v
	}
	return def
}

// SettingKey turns a name as the environment writes it (EBAY_CLIENT_ID) into a settings key
// (ebay_client_id).
func SettingKey(name string) string {
	return strings.ToLower(strings.NewReplacer("-", "_", ".", "_").Replace(strings.TrimSpace(name)))
}

// AppSettingsFromEnv collects the settings of the named applications from environment entries
// ("KEY=value", as os.Environ gives them): TRELLIS_APP_<APP>_<KEY>, where <APP> is the app's
// name in upper case with '_' for '-'. An entry that names no application is an error that
// lists the known ones, so a misspelt app does not go unnoticed.
func AppSettingsFromEnv(apps []string, environ []string) (map[string]AppSettings, error) {
	const prefix = "TRELLIS_APP_"
	envNames := make([]string, len(apps))
	for i, a := range apps {
		envNames[i] = strings.ToUpper(strings.ReplaceAll(a, "-", "_")) + "_"
	}
	out := map[string]AppSettings{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, prefix) {
			continue
		}
		rest := name[len(prefix):]
		// The longest app name that prefixes the rest wins ("LIST_FORGE_" before "LIST_").
		best := -1
		for i, en := range envNames {
			if strings.HasPrefix(rest, en) && len(rest) > len(en) && (best < 0 || len(en) > len(envNames[best])) {
				best = i
			}
		}
		if best < 0 {
			known := slices.Clone(envNames)
			for i := range known {
				known[i] = prefix + known[i] + "<KEY>"
			}
			return nil, fmt.Errorf("%s names no application: use one of %s", name, strings.Join(known, ", "))
		}
		app := apps[best]
		if out[app] == nil {
			out[app] = AppSettings{}
		}
		out[app][SettingKey(rest[len(envNames[best]):])] = value
	}
	return out, nil
}

// AppSetting documents one of an application's settings, for `trellis serve --help` and its page
// in docs/apps/.
type AppSetting struct {
	// Key is the settings key ("ebay_client_id"); the environment spells it
	// TRELLIS_APP_<APP>_<KEY> in upper case.
	Key string
	// Doc says what it is and its default, in one line.
	Doc string
}

// EnvName is the environment variable of the app's setting key: TRELLIS_APP_<APP>_<KEY>.
func EnvName(app, key string) string {
	up := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
	return "TRELLIS_APP_" + up(app) + "_" + up(key)
}
