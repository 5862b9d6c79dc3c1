package reports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/httpclient"
)

// PowerBIConfig configures the Power BI REST client. Zero fields are the
// documented defaults; TenantID, ClientID and ClientSecret are required.
type PowerBIConfig struct {
	// AuthorityURL is the identity platform (default
	// https://login.microsoftonline.com); the token endpoint is
	// {AuthorityURL}/{TenantID}/oauth2/v2.0/token.
	AuthorityURL string
	// TenantID is the directory (Azure AD tenant) of the service principal.
	TenantID string
	// ClientID and ClientSecret are the service principal's credentials.
	ClientID, ClientSecret string
	// Scope is the token scope (default https://analysis.windows.net/powerbi/api/.default).
	Scope string
	// BaseURL is the REST API root (default https://api.powerbi.com/v1.0/myorg).
	BaseURL string
	// EmbedTTL is how long an embed token is reused (default 55 minutes,
	// within the hour Power BI gives it). A token is never reused past its
	// own expiration less a minute.
	EmbedTTL time.Duration
	// Transport sends the requests (tests pass their local server's); nil means the default
	// transport, with httpclient's guard against private addresses other than a loopback base.
	Transport http.RoundTripper
	// Timeout bounds one request; zero means 15 s.
	Timeout time.Duration
	// Retries is how many times a read (the report's metadata) is tried again after a 429, a
	// 5xx or a connection error; zero means 2, negative none. Token requests are not retried.
	Retries int
	// Backoff is the wait before the first retry (doubling); zero means 250 ms.
	Backoff time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// ErrPowerBIConfig is wrapped by errors about a config that cannot work.
var ErrPowerBIConfig = errors.New("reports: bad Power BI config")

// APIError is an error answer of the token endpoint or the REST API.
type APIError struct {
	Op      string // "token", "get report", "generate token"
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("reports: power bi %s: HTTP %d %s: %s", e.Op, e.Status, e.Code, e.Message)
	switch {
	case e.Status == http.StatusNotFound:
		msg += " (check the workspace and report IDs of the menu item)"
	case e.Status == http.StatusUnauthorized || e.Code == "invalid_client":
		msg += " (check the service principal's client ID and secret)"
	case e.Status == http.StatusForbidden || strings.Contains(e.Code, "NotAuthorized"):
		msg += " (add the service principal to the workspace and allow service principals in the tenant settings)"
	}
	return msg
}

// Embed is what a browser needs to show a report.
type Embed struct {
	ReportID   string    `json:"report_id"`
	Name       string    `json:"report_name"`
	EmbedURL   string    `json:"embed_url"`
	WebURL     string    `json:"web_url,omitempty"`
	Token      string    `json:"embed_token"`
	TokenID    string    `json:"token_id,omitempty"`
	Expiration time.Time `json:"expiration"`
}

// PowerBI is a client for the parts of the Power BI REST API the chatbot
// uses: a service-principal token, report metadata, and GenerateToken for
// embed tokens. It is safe for concurrent use.
type PowerBI struct {
	cfg       PowerBIConfig
	opts      httpclient.Options
	authority *httpclient.Client // the identity platform's token endpoint

	mu     sync.Mutex
	rest   *httpclient.Client // the REST API with the current access token
	accExp time.Time
	embeds map[string]cachedEmbed
}

type cachedEmbed struct {
	e     Embed
	until time.Time // reuse before this: fetched + EmbedTTL, and a minute before the token expires
}

// NewPowerBI checks the config and returns a client.
func NewPowerBI(cfg PowerBIConfig) (*PowerBI, error) {
	if cfg.TenantID == "" || cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, fmt.Errorf("%w: TenantID, ClientID and ClientSecret are required (the service principal's directory, app ID and secret)", ErrPowerBIConfig)
	}
	if cfg.AuthorityURL == "" {
		cfg.AuthorityURL = "https://login.microsoftonline.com"
	}
	if cfg.Scope == "" {
		cfg.Scope = "https://analysis.windows.net/powerbi/api/.default"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.powerbi.com/v1.0/myorg"
	}
	for _, u := range []string{cfg.AuthorityURL, cfg.BaseURL} {
		if p, err := url.Parse(u); err != nil || p.Scheme == "" || p.Host == "" {
			return nil, fmt.Errorf("%w: %q is not an absolute URL", ErrPowerBIConfig, u)
		}
	}
	cfg.AuthorityURL = strings.TrimRight(cfg.AuthorityURL, "/")
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.EmbedTTL == 0 {
		cfg.EmbedTTL = 55 * time.Minute
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 2
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	opts := httpclient.Options{Timeout: cfg.Timeout, Retries: cfg.Retries, Backoff: cfg.Backoff, MaxResponseBytes: 1 << 20,
		Transport: cfg.Transport, Name: "power bi"}
	if _, err := httpclient.New(cfg.BaseURL, &opts); err != nil {
		return nil, fmt.Errorf("%w: BaseURL: %w", ErrPowerBIConfig, err)
	}
	tokenOpts := opts
	tokenOpts.Retries = -1 // a token request carries the secret: once
	authority, err := httpclient.New(cfg.AuthorityURL, &tokenOpts)
	if err != nil {
		return nil, fmt.Errorf("%w: AuthorityURL: %w", ErrPowerBIConfig, err)
	}
	return &PowerBI{cfg: cfg, opts: opts, authority: authority, embeds: map[string]cachedEmbed{}}, nil
}

// failed makes the error of a failed call: an *APIError with the code and message the API
// answered (the identity platform's {"error": "...", "error_description": "..."} or the REST
// API's {"error": {"code": ..., "message": ...}}), or the transport's error.
func failed(op string, err error) error {
	var se *httpclient.StatusError
	if !errors.As(err, &se) {
		return fmt.Errorf("reports: power bi %s: %w", op, err)
	}
	e := &APIError{Op: op, Status: se.Status}
	var aad struct {
		Error       json.RawMessage `json:"error"`
		Description string          `json:"error_description"`
	}
	if json.Unmarshal([]byte(se.Body), &aad) == nil && len(aad.Error) > 0 {
		var code string
		if json.Unmarshal(aad.Error, &code) == nil { // identity platform
			e.Code, e.Message = code, aad.Description
		} else { // REST API
			var inner struct{ Code, Message string }
			_ = json.Unmarshal(aad.Error, &inner)
			e.Code, e.Message = inner.Code, inner.Message
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(se.Body[:min(len(se.Body), 200)])
	}
	return e
}

// client returns the REST API's client with the service principal's access token, fetching
// a token when there is none or it is within five minutes of its expiry.
func (c *PowerBI) client(ctx context.Context) (*httpclient.Client, error) {
	c.mu.Lock()
	if c.rest != nil && c.cfg.Now().Before(c.accExp) {
		rest := c.rest
		c.mu.Unlock()
		return rest, nil
	}
	c.mu.Unlock()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.cfg.ClientID},
		"client_secret": {c.cfg.ClientSecret}, "scope": {c.cfg.Scope}}
	var out struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := c.authority.Form(ctx, "/"+url.PathEscape(c.cfg.TenantID)+"/oauth2/v2.0/token", form, &out); err != nil {
		return nil, failed("token", err)
	}
	if out.AccessToken == "" {
		return nil, &APIError{Op: "token", Status: http.StatusOK, Code: "no_token", Message: "the answer holds no access_token"}
	}
	opts := c.opts
	opts.Auth = httpclient.Bearer(out.AccessToken)
	rest, err := httpclient.New(c.cfg.BaseURL, &opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.rest = rest
	c.accExp = c.cfg.Now().Add(time.Duration(out.ExpiresIn)*time.Second - 5*time.Minute)
	c.mu.Unlock()
	return rest, nil
}

func (c *PowerBI) api(ctx context.Context, method, path, op string, in, out any) error {
	rest, err := c.client(ctx)
	if err != nil {
		return err
	}
	if err := rest.JSON(ctx, method, path, nil, in, out); err != nil {
		return failed(op, err)
	}
	return nil
}

// EmbedReport returns the embed URL and an embed token (access level View)
// for a report in a workspace, reusing a token for EmbedTTL.
func (c *PowerBI) EmbedReport(ctx context.Context, workspaceID, reportID string) (Embed, error) {
	if workspaceID == "" || reportID == "" {
		return Embed{}, fmt.Errorf("%w: the menu item has no workspace or report ID", ErrPowerBIConfig)
	}
	key := workspaceID + "/" + reportID
	now := c.cfg.Now()
	c.mu.Lock()
	if ce, ok := c.embeds[key]; ok && now.Before(ce.until) {
		c.mu.Unlock()
		return ce.e, nil
	}
	c.mu.Unlock()
	path := "/groups/" + url.PathEscape(workspaceID) + "/reports/" + url.PathEscape(reportID)
	var rep struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		EmbedURL string `json:"embedUrl"`
		WebURL   string `json:"webUrl"`
	}
	if err := c.api(ctx, http.MethodGet, path, "get report", nil, &rep); err != nil {
		return Embed{}, err
	}
	var tok struct {
		Token      string    `json:"token"`
		TokenID    string    `json:"tokenId"`
		Expiration time.Time `json:"expiration"`
	}
	if err := c.api(ctx, http.MethodPost, path+"/GenerateToken", "generate token", map[string]string{"accessLevel": "View"}, &tok); err != nil {
		return Embed{}, err
	}
	e := Embed{ReportID: rep.ID, Name: rep.Name, EmbedURL: rep.EmbedURL, WebURL: rep.WebURL, Token: tok.Token, TokenID: tok.TokenID, Expiration: tok.Expiration}
	until := now.Add(c.cfg.EmbedTTL)
	if !tok.Expiration.IsZero() && tok.Expiration.Add(-time.Minute).Before(until) {
		until = tok.Expiration.Add(-time.Minute)
	}
	c.mu.Lock()
	c.embeds[key] = cachedEmbed{e: e, until: until}
	c.mu.Unlock()
	return e, nil
}
