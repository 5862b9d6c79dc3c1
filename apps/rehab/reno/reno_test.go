package reno_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/pack"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

type counting struct {
	model.Model
	n atomic.Int64
}

func (c *counting) Generate(ctx context.Context, r *model.Request) (*model.Response, error) {
	c.n.Add(1)
	return c.Model.Generate(ctx, r)
}

func TestPipelineOffline(t *testing.T) {
	t.Parallel()
	lc, err := listing.NewDemo()
	if err != nil {
		t.Fatal(err)
	}
	vision := &counting{Model: offline.New(nil)}
	p := &reno.Pipeline{Listings: lc, Vision: vision}
	s, err := p.Scrape(context.Background(), "https://www.idealista.pt/imovel/12345/")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rooms) != 5 || vision.n.Load() != 5 {
		t.Fatalf("rooms %+v, %d vision calls", s.Rooms, vision.n.Load())
	}
	k := s.Rooms[0]
	if k.Type != "kitchen" || k.Condition != reno.Poor || k.AreaM2 != 8 || len(k.Features) != 3 {
		t.Errorf("kitchen %+v", k)
	}
	if s.Rooms[3].Type != "bedroom" || s.Rooms[3].Index != 0 || s.Rooms[4].Index != 1 {
		t.Errorf("bedroom indexes %+v", s.Rooms[3:])
	}
	base := reno.Analyze(s.Listing, "p1", s.Rooms, reno.Preferences{})
	if base.TotalMin <= 0 || base.TotalMax <= base.TotalMin || base.Price != 180000 {
		t.Errorf("result %+v", base)
	}
	diy := reno.Analyze(s.Listing, "p1", s.Rooms, reno.Preferences{Skills: []string{"Pintura", "demolição"}})
	if diy.TotalMax >= base.TotalMax {
		t.Errorf("DIY skills do not lower the estimate: %v vs %v", diy.TotalMax, base.TotalMax)
	}
	premium := reno.Analyze(s.Listing, "p1", s.Rooms, reno.Preferences{Quality: "premium"})
	if premium.TotalMax <= base.TotalMax {
		t.Errorf("premium finish not dearer")
	}
}

func TestEstimateRules(t *testing.T) {
	t.Parallel()
	rooms := []reno.Room{{Type: "kitchen", AreaM2: 8, Condition: reno.Poor}, {Type: "bedroom", AreaM2: 12, Condition: reno.Good}}
	e := reno.Estimate(rooms, reno.Preferences{})
	// 8 m² at 1000-1500 €/m² = 8.000-12.000€, above the kitchen minimum of 6.000-9.000€.
	if e[0].Min != 8000 || e[0].Max != 12000 {
		t.Errorf("kitchen %+v", e[0])
	}
	if e[1].Min != 0 || e[1].Max != 200 {
		t.Errorf("bedroom %+v", e[1])
	}
	skip := reno.Estimate(rooms, reno.Preferences{Skip: []string{"kitchen"}})
	if skip[0].Max != 0 {
		t.Errorf("skipped kitchen still costs %v", skip[0].Max)
	}
	for in, want := range map[string]string{"Canalização": "canalizacao", "painting": "pintura", "Eletricidade": "eletricidade", "cantar": ""} {
		if got := reno.NormalizeSkill(in); got != want {
			t.Errorf("%s: %q", in, got)
		}
	}
}

// The pack's skills (words.json) are the estimate's categories, each with its words.
func TestPackSkillsAreTheCategories(t *testing.T) {
	named := map[string]bool{}
	for _, c := range pack.Words.Skills {
		if _, ok := reno.DIYSkills[c.Value]; !ok {
			t.Errorf("words.json skill %q is not a category of reno.DIYSkills", c.Value)
		}
		named[c.Value] = true
	}
	for k := range reno.DIYSkills {
		if !named[k] {
			t.Errorf("reno.DIYSkills %q has no words in words.json's skills", k)
		}
	}
}

// Every room type and condition has its label in words.json, and so has one the estimate does
// not know.
func TestLabelsOfEveryTypeAndCondition(t *testing.T) {
	for _, r := range reno.RoomTypes {
		if pack.Words.RoomLabels[r] == "" {
			t.Errorf("words.json room_labels lacks %q", r)
		}
	}
	for _, c := range append(slices.Clone(reno.Conditions), "unknown") {
		if pack.Words.ConditionLabels[c] == "" {
			t.Errorf("words.json condition_labels lacks %q", c)
		}
	}
	if got := reno.RoomLabel("attic"); got != "Outra divisão" {
		t.Errorf("an unknown room type: %q", got)
	}
	if got := reno.ConditionLabel("ruined"); got != "estado desconhecido" {
		t.Errorf("an unknown condition: %q", got)
	}
	if got := reno.RoomLabel("bathroom") + ", " + reno.ConditionLabel(reno.Poor); got != "Casa de banho, mau estado" {
		t.Errorf("got %q", got)
	}
}
