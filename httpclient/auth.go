package httpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Auth adds credentials to a request. Use APIKey, APIKeyQuery, Bearer, Basic or a
// *ClientCredentials.
type Auth interface {
	apply(ctx context.Context, req *http.Request) error
}

// refresher is an Auth holding a token that an answer 401 should make it fetch again.
type refresher interface{ forget() }

type authFunc func(ctx context.Context, req *http.Request) error

func (f authFunc) apply(ctx context.Context, req *http.Request) error { return f(ctx, req) }

// APIKey sends key in a header (X-API-Key, say).
func APIKey(header, key string) Auth {
	return authFunc(func(_ context.Context, req *http.Request) error {
		if key == "" {
			return errors.New("the API key is empty: set it in the app's configuration")
		}
		req.Header.Set(header, key)
		return nil
	})
}

// APIKeyQuery sends key as a query parameter (for APIs that take ?api_key=).
func APIKeyQuery(param, key string) Auth {
	return authFunc(func(_ context.Context, req *http.Request) error {
		if key == "" {
			return errors.New("the API key is empty: set it in the app's configuration")
		}
		q := req.URL.Query()
		q.Set(param, key)
		req.URL.RawQuery = q.Encode()
		return nil
	})
}

// Bearer sends Authorization: Bearer token.
func Bearer(token string) Auth {
	return authFunc(func(_ context.Context, req *http.Request) error {
		if token == "" {
			return errors.New("the token is empty: set it in the app's configuration")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}

// Basic sends HTTP basic credentials.
func Basic(user, password string) Auth {
	return authFunc(func(_ context.Context, req *http.Request) error {
		req.SetBasicAuth(user, password)
		return nil
	})
}

// ClientCredentials gets a token with the OAuth 2.0 client credentials grant (RFC 6749 §4.4)
// and sends it as a bearer token. The token is cached until shortly before it expires, fetched
// by one caller while the others wait, and fetched again when the API answers 401.
type ClientCredentials struct {
	// TokenURL is the authorisation server's token endpoint. Required.
	TokenURL string
	// ClientID and ClientSecret are sent with HTTP basic authentication. Required.
	ClientID, ClientSecret string
	// Scopes are requested, space separated.
	Scopes []string
	// Client fetches tokens; nil means a client with a 20 s timeout.
	Client *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

func (cc *ClientCredentials) forget() {
	cc.mu.Lock()
	cc.token = ""
	cc.mu.Unlock()
}

func (cc *ClientCredentials) apply(ctx context.Context, req *http.Request) error {
	tok, err := cc.Token(ctx)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// Token returns a valid access token, fetching one when none is cached or it is about to expire.
func (cc *ClientCredentials) Token(ctx context.Context) (string, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.token != "" && time.Until(cc.expires) > 30*time.Second {
		return cc.token, nil
	}
	if cc.TokenURL == "" || cc.ClientID == "" || cc.ClientSecret == "" {
		return "", errors.New("client credentials need TokenURL, ClientID and ClientSecret")
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(cc.Scopes) > 0 {
		form.Set("scope", strings.Join(cc.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cc.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("token URL %q: %w", cc.TokenURL, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(cc.ClientID), url.QueryEscape(cc.ClientSecret))
	hc := cc.Client
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching a token from %s: %w", cc.TokenURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var tr struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		why := tr.Error
		if tr.Description != "" {
			why += ": " + tr.Description
		}
		if why == "" {
			why = strings.TrimSpace(snippet(body))
		}
		return "", fmt.Errorf("the token endpoint %s answered %d (%s): check the client ID and secret", cc.TokenURL, resp.StatusCode, why)
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return "", fmt.Errorf("the token endpoint gave a %q token; only bearer tokens are supported", tr.TokenType)
	}
	life := time.Duration(tr.ExpiresIn) * time.Second
	if life <= 0 {
		life = time.Hour
	}
	cc.token, cc.expires = tr.AccessToken, time.Now().Add(life)
	return cc.token, nil
}
