package model_test

import (
	"context"
	"iter"
	"testing"

	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/telemetry"
)

// bare wraps a model without passing its identity on: only Unwrap leads to it.
type bare struct{ inner model.Model }

func (b bare) Generate(ctx context.Context, r *model.Request) (*model.Response, error) {
	return b.inner.Generate(ctx, r)
}
func (b bare) Stream(ctx context.Context, r *model.Request) iter.Seq2[model.Chunk, error] {
	return b.inner.Stream(ctx, r)
}
func (b bare) Unwrap() model.Model { return b.inner }

// loop unwraps to itself: IsOffline must still answer.
type loop struct{ bare }

func (l *loop) Unwrap() model.Model { return l }

// TestIsOffline: the offline model is recognised by its identity, through telemetry's wrapper and
// through any wrapper with Unwrap; other models and nil are not.
func TestIsOffline(t *testing.T) {
	t.Parallel()
	off := offline.New(nil)
	for name, c := range map[string]struct {
		m    model.Model
		want bool
	}{
		"offline":              {off, true},
		"traced":               {telemetry.Model(off, telemetry.ModelInfo{}), true},
		"bare wrapper":         {bare{off}, true},
		"bare around traced":   {bare{telemetry.Model(off, telemetry.ModelInfo{})}, true},
		"scripted":             {scripted.New(), false},
		"traced scripted":      {telemetry.Model(scripted.New(), telemetry.ModelInfo{}), false},
		"nil":                  {nil, false},
		"a loop of unwrapping": {&loop{}, false},
	} {
		if got := model.IsOffline(c.m); got != c.want {
			t.Errorf("%s: IsOffline = %v, want %v", name, got, c.want)
		}
	}
}
