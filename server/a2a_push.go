package server

// A2A push notifications: tasks/pushNotificationConfig/set|get|list|delete keep a task's
// webhook configs, and each time a run of the task ends (the task completed, failed, canceled or
// waiting for input) the server POSTs the task, as tasks/get answers it, to every config's URL.
// The configs live in the server's shared store, under a namespace no tenant's /store routes
// reach (["__a2a_push__", tenant, task]); the POSTs go out as run webhooks do (same client,
// timeout and address policy: loopback only with --dev).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/trellis-go/trellis/server/internal/engine"
	"github.com/trellis-go/trellis/store"
)

const a2aPushNS = "__a2a_push__"

func a2aPushNamespace(tenant, taskID string) []string {
	return []string{a2aPushNS, tenant, taskID}
}

// a2aPushMethod answers the push notification config methods.
func (s *Server) a2aPushMethod(ctx context.Context, a *Assistant, method string, raw json.RawMessage) (any, error) {
	p, _ := PrincipalFrom(ctx)
	switch method {
	case "tasks/pushNotificationConfig/set":
		var params a2a.TaskPushConfig
		if err := a2aParams(raw, &params); err != nil {
			return nil, err
		}
		run, err := s.a2aTaskRun(ctx, a, string(params.TaskID))
		if err != nil {
			return nil, err
		}
		return s.a2aSetPush(ctx, p.Tenant, a2aTaskOf(run), params.Config)
	case "tasks/pushNotificationConfig/get":
		var params a2a.GetTaskPushConfigParams
		if err := a2aParams(raw, &params); err != nil {
			return nil, err
		}
		if _, err := s.a2aTaskRun(ctx, a, string(params.TaskID)); err != nil {
			return nil, err
		}
		id := params.ConfigID
		if id == "" {
			id = string(params.TaskID)
		}
		item, err := s.store.Get(ctx, store.GetRequest{Namespace: a2aPushNamespace(p.Tenant, string(params.TaskID)), Key: id})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if item == nil {
			return nil, rpcError(a2aInvalidParams, "task %q has no push notification config %q (tasks/pushNotificationConfig/list lists them)", params.TaskID, id)
		}
		return a2aPushOf(params.TaskID, item.Value), nil
	case "tasks/pushNotificationConfig/list":
		var params a2a.ListTaskPushConfigParams
		if err := a2aParams(raw, &params); err != nil {
			return nil, err
		}
		if _, err := s.a2aTaskRun(ctx, a, string(params.TaskID)); err != nil {
			return nil, err
		}
		items, err := s.a2aPushItems(ctx, p.Tenant, string(params.TaskID))
		if err != nil {
			return nil, err
		}
		out := []*a2a.TaskPushConfig{}
		for _, it := range items {
			out = append(out, a2aPushOf(params.TaskID, it.Value))
		}
		return out, nil
	case "tasks/pushNotificationConfig/delete":
		var params a2a.DeleteTaskPushConfigParams
		if err := a2aParams(raw, &params); err != nil {
			return nil, err
		}
		if _, err := s.a2aTaskRun(ctx, a, string(params.TaskID)); err != nil {
			return nil, err
		}
		if params.ConfigID == "" {
			return nil, rpcError(a2aInvalidParams, "the params need pushNotificationConfigId: the config to delete")
		}
		return nil, s.store.Delete(ctx, store.DeleteRequest{Namespace: a2aPushNamespace(p.Tenant, string(params.TaskID)), Key: params.ConfigID})
	}
	return nil, rpcError(a2aMethodNotFound, "no method %q", method)
}

// a2aSetPush checks a push config and keeps it for the task.
func (s *Server) a2aSetPush(ctx context.Context, tenant, taskID string, c a2a.PushConfig) (*a2a.TaskPushConfig, error) {
	if err := s.checkPushURL(c.URL); err != nil {
		return nil, err
	}
	if c.ID == "" {
		c.ID = taskID
	}
	v := map[string]any{"id": c.ID, "url": c.URL}
	if c.Token != "" {
		v["token"] = c.Token
	}
	if c.Auth != nil {
		v["schemes"] = c.Auth.Schemes
		v["credentials"] = c.Auth.Credentials
	}
	if err := s.store.Put(ctx, store.PutRequest{Namespace: a2aPushNamespace(tenant, taskID), Key: c.ID, Value: v, NoIndex: true}); err != nil {
		return nil, err
	}
	return &a2a.TaskPushConfig{TaskID: a2a.TaskID(taskID), Config: c}, nil
}

// checkPushURL refuses a URL that is not http(s), and, unless in dev mode (or with
// Config.WebhookAllowPrivate), one naming a loopback host (the sender would refuse it anyway;
// this says so at once).
func (s *Server) checkPushURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return rpcError(a2aInvalidParams, "pushNotificationConfig.url is not an absolute http or https URL: %q", raw)
	}
	if !s.cfg.Dev && !s.cfg.WebhookAllowPrivate {
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || strings.EqualFold(host, "localhost") {
			return rpcError(a2aInvalidParams, "pushNotificationConfig.url %q is a loopback address: only a --dev server sends notifications to loopback", raw)
		}
	}
	return nil
}

func (s *Server) a2aPushItems(ctx context.Context, tenant, taskID string) ([]store.SearchItem, error) {
	return s.store.Search(ctx, store.SearchRequest{NamespacePrefix: a2aPushNamespace(tenant, taskID), Limit: 100})
}

func a2aPushOf(taskID a2a.TaskID, v map[string]any) *a2a.TaskPushConfig {
	c := a2a.PushConfig{}
	c.ID, _ = v["id"].(string)
	c.URL, _ = v["url"].(string)
	c.Token, _ = v["token"].(string)
	if schemes, ok := v["schemes"].([]any); ok {
		c.Auth = &a2a.PushAuthInfo{Schemes: []string{}}
		for _, sc := range schemes {
			if str, ok := sc.(string); ok {
				c.Auth.Schemes = append(c.Auth.Schemes, str)
			}
		}
		c.Auth.Credentials, _ = v["credentials"].(string)
	}
	return &a2a.TaskPushConfig{TaskID: taskID, Config: c}
}

// a2aNotify is called when an attempt at a run ends: for a run of an A2A task that has push
// configs, it POSTs the task to each, in the background.
func (s *Server) a2aNotify(run *Run, o engine.Outcome) {
	if o.Status == RunPending {
		return // retried: not an update of the task
	}
	if _, ok := run.Metadata["a2a_message_id"]; !ok {
		return
	}
	ended := *run
	ended.Status = o.Status
	if o.Err != nil {
		ended.LastError = o.Err.Error()
	}
	ended.UpdatedAt = time.Now().UTC()
	s.a2aPush(&ended, a2aTaskOf(run), "")
}

// a2aPush POSTs the task of a run that has ended to the task's push configs (to the config
// named only, when set).
func (s *Server) a2aPush(run *Run, taskID, only string) {
	ctx := context.Background()
	items, err := s.a2aPushItems(ctx, run.tenant, taskID)
	if err != nil || len(items) == 0 {
		return
	}
	task, err := s.a2aTask(ctx, run, taskID, s.hub.Get(run.RunID))
	if err != nil {
		s.log.Warn("a2a push: cannot make the task", "task_id", taskID, "err", err)
		return
	}
	body, err := json.Marshal(task)
	if err != nil {
		return
	}
	for _, it := range items {
		c := a2aPushOf(a2a.TaskID(taskID), it.Value).Config
		if only != "" && c.ID != only {
			continue
		}
		s.runs.hooks.post(c.URL, body, func(h http.Header) {
			if c.Token != "" {
				h.Set("X-A2A-Notification-Token", c.Token)
			}
			if c.Auth != nil && c.Auth.Credentials != "" {
				for _, sc := range c.Auth.Schemes {
					if strings.EqualFold(sc, "bearer") || strings.EqualFold(sc, "basic") {
						h.Set("Authorization", fmt.Sprintf("%s %s", sc, c.Auth.Credentials))
						break
					}
				}
			}
		}, "task_id", taskID)
	}
}
