package tool

import "sync"

// AllTenants is the tenant name whose settings in [Tenants] apply to every tenant without a
// setting of its own.
const AllTenants = "*"

// Tenants switches tools on and off per tenant. It is an [Enabler] for [ExecutorOptions].
//
// A tool is enabled for a tenant when that tenant's own setting says so; without one, the setting
// of [AllTenants] decides; without that, the tool is enabled. So the zero value enables everything,
// and a tool reserved for some tenants is disabled for AllTenants and enabled for each of them.
// Safe for concurrent use.
type Tenants struct {
	mu  sync.RWMutex
	set map[string]map[string]bool // tenant -> tool -> enabled
}

// Enable switches tools on for a tenant (or for [AllTenants]).
func (t *Tenants) Enable(tenant string, tools ...string) { t.put(tenant, true, tools) }

// Disable switches tools off for a tenant (or for [AllTenants]).
func (t *Tenants) Disable(tenant string, tools ...string) { t.put(tenant, false, tools) }

// Reset forgets a tenant's own settings, so the [AllTenants] settings apply to it again.
func (t *Tenants) Reset(tenant string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.set, tenant)
}

func (t *Tenants) put(tenant string, on bool, tools []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.set == nil {
		t.set = map[string]map[string]bool{}
	}
	m := t.set[tenant]
	if m == nil {
		m = map[string]bool{}
		t.set[tenant] = m
	}
	for _, name := range tools {
		m[name] = on
	}
}

// Enabled reports whether tool is switched on for tenant.
func (t *Tenants) Enabled(tenant, tool string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if on, ok := t.set[tenant][tool]; ok {
		return on
	}
	if on, ok := t.set[AllTenants][tool]; ok {
		return on
	}
	return true
}
