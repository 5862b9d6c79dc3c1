package provider_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/anthropic"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/openai"
	"github.com/trellis-go/trellis/model/provider"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestNothingConfiguredMeansOffline(t *testing.T) {
	roles, err := provider.FromEnv(env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{model.RoleDefault, model.RoleFast, model.RoleStrong, "summary"} {
		if _, ok := roles.For(role).(*offline.Model); !ok {
			t.Errorf("role %s = %T", role, roles.For(role))
		}
	}
	if roles.Spec(model.RoleFast) != "offline" {
		t.Errorf("spec = %q", roles.Spec(model.RoleFast))
	}
}

func TestRolesFromEnvironment(t *testing.T) {
	roles, err := provider.FromEnviron([]string{
		"TRELLIS_MODEL=anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY=k1",
		"TRELLIS_MODEL_FAST=openai:gpt-4o-mini", "OPENAI_API_KEY=k2",
		"TRELLIS_MODEL_SUMMARY=openai-compatible:llama3.1@http://127.0.0.1:11434/v1",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := roles.Default().(*anthropic.Model); !ok {
		t.Errorf("default = %T", roles.Default())
	}
	if _, ok := roles.For("FAST").(*openai.Model); !ok {
		t.Errorf("fast = %T", roles.For("fast"))
	}
	if _, ok := roles.For(model.RoleStrong).(*anthropic.Model); !ok {
		t.Errorf("strong should fall back to the default, got %T", roles.For(model.RoleStrong))
	}
	if roles.Spec("summary") != "openai-compatible:llama3.1@http://127.0.0.1:11434/v1" {
		t.Errorf("summary spec = %q", roles.Spec("summary"))
	}
}

func TestMissingKeyFailsAtStartNamingVariable(t *testing.T) {
	_, err := provider.FromEnv(env(map[string]string{"TRELLIS_MODEL_STRONG": "anthropic:claude-sonnet-4-5"}), nil)
	if !errors.Is(err, model.ErrMissingKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") || !strings.Contains(err.Error(), "TRELLIS_MODEL_STRONG") {
		t.Fatalf("err = %v", err)
	}
	_, err = provider.FromEnv(env(map[string]string{"TRELLIS_MODEL": "openai:gpt-4o"}), nil)
	if !errors.Is(err, model.ErrMissingKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

func TestBadSettings(t *testing.T) {
	for _, v := range []string{"gpt-4o", "openai:", "azure:gpt-4o", "openai-compatible:llama3.1", "openai-compatible:llama3.1@localhost:11434", "openai:gpt-4o@ftp://x"} {
		_, err := provider.Open("TRELLIS_MODEL", v, env(map[string]string{"OPENAI_API_KEY": "k"}), nil)
		if !errors.Is(err, model.ErrConfig) || !strings.Contains(err.Error(), "TRELLIS_MODEL=") {
			t.Errorf("%q: err = %v", v, err)
		}
	}
}

func TestOpenAIBaseURLFromEnvironmentReachesServer(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Reply{Text: "hello from the wire"})
	m, err := provider.Open("TRELLIS_MODEL", "openai:gpt-4o-mini", env(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL + "/v1"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("hi")}})
	if err != nil || resp.Message.Content != "hello from the wire" {
		t.Fatalf("%v %+v", err, resp)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer k" {
		t.Errorf("auth header = %q", got)
	}
}

// A host that accepts connections but never completes TLS fails the call on the connect timeout
// from TRELLIS_MODEL_CONNECT_TIMEOUT, for every provider; the request's own timeout (minutes) is
// not what ends it.
func TestConnectTimeoutFromEnvironment(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // accept and say nothing
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	base := "https://" + ln.Addr().String()
	vars := map[string]string{
		provider.ConnectTimeoutSetting: "300ms",
		"TRELLIS_MODEL":                "openai:gpt-4o-mini@" + base + "/v1",
		"TRELLIS_MODEL_STRONG":         "anthropic:claude-sonnet-4-5@" + base,
		"OPENAI_API_KEY":               "k", "ANTHROPIC_API_KEY": "k",
	}
	roles, err := provider.FromEnviron(environ(vars), &provider.Options{
		OpenAI: openai.Options{MaxRetries: -1}, Anthropic: anthropic.Options{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if roles.Spec("connect_timeout") != roles.Spec(model.RoleDefault) {
		t.Errorf("the connect timeout was read as a role: %q", roles.Spec("connect_timeout"))
	}
	for _, role := range []string{model.RoleDefault, model.RoleStrong} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := roles.For(role).Generate(ctx, &model.Request{Messages: []message.Message{message.User("hi")}})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "TLS handshake timeout") {
			t.Errorf("%s: err = %v, want a TLS handshake timeout", role, err)
		}
	}
}

func TestBadConnectTimeout(t *testing.T) {
	for _, v := range []string{"5", "-1s", "soon"} {
		_, err := provider.FromEnv(env(map[string]string{provider.ConnectTimeoutSetting: v}), nil)
		if !errors.Is(err, model.ErrConfig) || !strings.Contains(err.Error(), provider.ConnectTimeoutSetting) {
			t.Errorf("%q: err = %v", v, err)
		}
	}
}

func environ(kv map[string]string) []string {
	var out []string
	for k, v := range kv {
		out = append(out, k+"="+v)
	}
	return out
}
