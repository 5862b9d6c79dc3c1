package vesper

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/tool"
)

// powerBI speaks the identity platform's token endpoint and the Power BI REST calls a deep link
// needs (report metadata and GenerateToken), as documented.
func powerBI(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var generated atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /aad/oauth2/v2.0/token", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("client_id") != "vesper-sp" || r.FormValue("client_secret") != "s3cret" || r.FormValue("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": 3599, "access_token": "aad-token"})
	})
	mux.HandleFunc("GET /groups/{ws}/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer aad-token" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"id": r.PathValue("id"), "name": "Report",
			"embedUrl": "https://app.powerbi.com/reportEmbed?reportId=" + r.PathValue("id")})
	})
	mux.HandleFunc("POST /groups/{ws}/reports/{id}/GenerateToken", func(w http.ResponseWriter, r *http.Request) {
		generated.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"token": "embed-token", "tokenId": "tid", "expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &generated
}

// Configured with a Power BI service principal through its settings (as trellis serve reads
// TRELLIS_APP_VESPER_POWERBI_*), the served app's deep links carry an embed URL and token.
func TestServedWithPowerBISettings(t *testing.T) {
	pbi, generated := powerBI(t)
	hs := serveDev(t, server.Config{AppSettings: map[string]server.AppSettings{"vesper": {
		"powerbi_tenant_id": "aad", "powerbi_client_id": "vesper-sp", "powerbi_client_secret": "s3cret",
		"powerbi_authority_url": pbi.URL, "powerbi_base_url": pbi.URL,
	}}})
	o, _ := askServed(t, hs, "What is the health status of Nazareth Solar?")
	if len(o.Links) == 0 {
		t.Fatalf("no deep links: %+v", o)
	}
	for _, l := range o.Links {
		if l.EmbedToken != "embed-token" || !strings.HasPrefix(l.EmbedURL, "https://app.powerbi.com/reportEmbed") {
			t.Fatalf("link without Power BI embedding: %+v", l)
		}
	}
	if generated.Load() == 0 {
		t.Fatal("Power BI was never asked for an embed token")
	}
}

// Bad Power BI settings (a service principal without its secret) stop the server with an error
// that names the settings to fix.
func TestBadPowerBISettings(t *testing.T) {
	_, err := server.New(server.Config{Apps: []server.App{App()}, DataDir: seeded(t), Dev: true,
		AppSettings: map[string]server.AppSettings{"vesper": {"powerbi_tenant_id": "aad", "powerbi_client_id": "x"}}})
	if err == nil || !strings.Contains(err.Error(), "TRELLIS_APP_VESPER_POWERBI") {
		t.Fatalf("err = %v", err)
	}
}

// With a Redis cache (what the served app uses when the server has Redis), resolved project
// names land in Redis, where every replica finds them.
func TestResolvedNamesAreCachedInRedis(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Skipf("Redis is not reachable on 127.0.0.1:6379 (%v): skipping the Redis entity cache test", err)
	}
	prefix := "vesper-test-" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	defer func() {
		keys, _ := rdb.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	}()
	o, err := open(ctx, openConfig{DataDir: seeded(t), Options: Options{Cache: entity.NewRedisCache(rdb, prefix)}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Warehouse.Close()
	st, err := o.App.Graph.Invoke(tool.WithCallInfo(ctx, tool.CallInfo{Tenant: "vesper", User: "u", Permissions: []string{"*"}}),
		supervisor.State{Messages: []message.Message{message.User("What is the health status of Nazareth Solar?")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Answer, "Nazareth Solar") {
		t.Fatalf("answer %q", st.Answer)
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no resolution cached in Redis under %s* (%v)", prefix, err)
	}
}
