package listforge

import (
	"testing"

	"github.com/trellis-go/trellis/server"
)

func TestEbayFromSettings(t *testing.T) {
	if c := ebayFromSettings(server.AppSettings{}); c != nil {
		t.Fatalf("no keys gave %+v, want the generated catalogue", c)
	}
	c := ebayFromSettings(server.AppSettings{"ebay_client_id": "id", "ebay_client_secret": "s", "ebay_base_url": "http://127.0.0.1:9"})
	if c == nil || c.ClientID != "id" || c.ClientSecret != "s" || c.BaseURL != "http://127.0.0.1:9" {
		t.Fatalf("settings gave %+v", c)
	}
}
