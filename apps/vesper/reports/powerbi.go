package reports

import (
	"bytes"
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
	// HTTPClient sends the requests (default a client with a 15s timeout).
	HTTPClient *http.Client
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
	cfg PowerBIConfig

	mu     sync.Mutex
	access string
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
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &PowerBI{cfg: cfg, embeds: map[string]cachedEmbed{}}, nil
}

func (c *PowerBI) do(req *http.Request, op string, out any) error {
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("reports: power bi %s: %w", op, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("reports: power bi %s: read answer: %w", op, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Op: op, Status: resp.StatusCode}
		var aad struct {
			Error       json.RawMessage `json:"error"`
			Description string          `json:"error_description"`
		}
		if json.Unmarshal(body, &aad) == nil && len(aad.Error) > 0 {
			var code string
			if json.Unmarshal(aad.Error, &code) == nil { // identity platform: {"error": "invalid_client", ...}
				e.Code, e.Message = code, aad.Description
			} else { // REST API: {"error": {"code": ..., "message": ...}}
				var inner struct{ Code, Message string }
				_ = json.Unmarshal(aad.Error, &inner)
				e.Code, e.Message = inner.Code, inner.Message
			}
		}
		if e.Message == "" {
			e.Message = strings.TrimSpace(string(body[:min(len(body), 200)]))
		}
		return e
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("reports: power bi %s: bad JSON answer: %w", op, err)
	}
	return nil
}

// token returns the service principal's access token, reusing it until
// five minutes before it expires.
func (c *PowerBI) token(ctx context.Context) (string, error) {
	c.mu.Lock()
	if c.access != "" && c.cfg.Now().Before(c.accExp) {
		t := c.access
		c.mu.Unlock()
		return t, nil
	}
	c.mu.Unlock()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.cfg.ClientID},
		"client_secret": {c.cfg.ClientSecret}, "scope": {c.cfg.Scope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		c.cfg.AuthorityURL+"/"+url.PathEscape(c.cfg.TenantID)+"/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var out struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := c.do(req, "token", &out); err != nil {
		return "", err
	}
	if out.AccessToken == "" {
		return "", &APIError{Op: "token", Status: http.StatusOK, Code: "no_token", Message: "the answer holds no access_token"}
	}
	c.mu.Lock()
	c.access = out.AccessToken
	c.accExp = c.cfg.Now().Add(time.Duration(out.ExpiresIn)*time.Second - 5*time.Minute)
	c.mu.Unlock()
	return out.AccessToken, nil
}

func (c *PowerBI) api(ctx context.Context, method, path, op string, in, out any) error {
	tok, err := c.token(ctx)
	if err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.BaseURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.do(req, op, out)
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
