package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/rs/cors"
)

// CORSConfig lets web pages of other origins call the API from a browser (LangGraph's http.cors
// settings). The zero value of a field is its default; a nil Config.CORS sends no CORS headers,
// so browsers keep other origins' pages out.
type CORSConfig struct {
	// AllowOrigins lists the origins whose pages may call the API ("https://app.example.com"),
	// with at most one "*" each ("https://*.example.com"); "*" alone allows every origin. Required.
	AllowOrigins []string
	// AllowMethods lists the methods allowed; empty means GET, POST, PUT, PATCH, DELETE.
	AllowMethods []string
	// AllowHeaders lists the request headers a page may send; empty means the API's own:
	// Authorization, Content-Type, X-Api-Key, Last-Event-ID, Mcp-Session-Id,
	// Mcp-Protocol-Version. "*" allows any.
	AllowHeaders []string
	// ExposeHeaders lists the answer headers a page may read; empty means Content-Location,
	// X-Pagination-Next, X-Pagination-Total, Retry-After, Mcp-Session-Id.
	ExposeHeaders []string
	// AllowCredentials lets pages send cookies and HTTP auth (fetch's credentials: "include").
	// It cannot go with "*" in AllowOrigins.
	AllowCredentials bool
	// MaxAge is how long, in seconds, a browser may keep a preflight's answer; zero means 600.
	MaxAge int
}

var (
	corsDefaultMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	corsDefaultHeaders = []string{"Authorization", "Content-Type", "X-Api-Key", "Last-Event-ID", "Mcp-Session-Id", "Mcp-Protocol-Version"}
	corsDefaultExpose  = []string{"Content-Location", "X-Pagination-Next", "X-Pagination-Total", "Retry-After", "Mcp-Session-Id"}
)

func (c *CORSConfig) check() error {
	if len(c.AllowOrigins) == 0 {
		return &ConfigError{Field: "CORS.AllowOrigins", Problem: "is empty", Hint: "list the origins whose pages may call the API, e.g. https://app.example.com (--cors-origins), or leave CORS unset"}
	}
	for _, o := range c.AllowOrigins {
		if o == "*" {
			if c.AllowCredentials {
				return &ConfigError{Field: "CORS.AllowCredentials", Problem: "is set with the origin \"*\"", Hint: "browsers refuse credentials to every origin; list the origins instead"}
			}
			continue
		}
		if strings.Count(o, "*") > 1 || !(strings.HasPrefix(o, "http://") || strings.HasPrefix(o, "https://")) {
			return &ConfigError{Field: "CORS.AllowOrigins", Problem: fmt.Sprintf("has %q", o), Hint: "give origins as scheme://host[:port], with at most one *, e.g. https://*.example.com"}
		}
	}
	if c.MaxAge < 0 {
		return &ConfigError{Field: "CORS.MaxAge", Problem: "is negative", Hint: "give seconds, or 0 for 600"}
	}
	return nil
}

// wrap wraps h with the CORS answers c asks for: preflights are answered before routing
// (and before authentication, as browsers send them without credentials).
func (c *CORSConfig) wrap(h http.Handler) http.Handler {
	pick := func(v, def []string) []string {
		if len(v) == 0 {
			return def
		}
		return v
	}
	maxAge := c.MaxAge
	if maxAge == 0 {
		maxAge = 600
	}
	return cors.New(cors.Options{
		AllowedOrigins:   c.AllowOrigins,
		AllowedMethods:   pick(c.AllowMethods, corsDefaultMethods),
		AllowedHeaders:   pick(c.AllowHeaders, corsDefaultHeaders),
		ExposedHeaders:   pick(c.ExposeHeaders, corsDefaultExpose),
		AllowCredentials: c.AllowCredentials,
		MaxAge:           maxAge,
	}).Handler(h)
}
