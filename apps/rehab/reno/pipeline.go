package reno

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/prompts"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Pipeline scrapes, classifies and estimates.
type Pipeline struct {
	// Listings fetches listing pages and photos. Required.
	Listings *listing.Client
	// Vision classifies photos. Required.
	Vision model.Model
	// Parallel bounds concurrent photo classifications; zero means 4.
	Parallel int
}

// classification is the vision model's structured answer for one photo.
type classification struct {
	RoomType  string   `json:"room_type"`
	Condition string   `json:"condition"`
	Features  []string `json:"features"`
}

var classifySchema = &model.Schema{Name: "room_classification", Description: "What a listing photo shows.", JSON: json.RawMessage(`{
 "type": "object",
 "properties": {
  "room_type": {"type": "string", "enum": ["kitchen", "bathroom", "living_room", "bedroom", "hallway", "balcony", "exterior", "other"]},
  "condition": {"type": "string", "enum": ["good", "fair", "needs_renovation", "poor"]},
  "features": {"type": "array", "items": {"type": "string"}, "description": "visible features and problems, in Portuguese"}
 },
 "required": ["room_type", "condition", "features"],
 "additionalProperties": false
}`)}

// classifyPrompt is the vision model's instruction (prompts/classify.md).
var classifyPrompt = prompts.Classify

// Scraped is a fetched listing with its rooms classified.
type Scraped struct {
	Listing *listing.Listing
	Rooms   []Room
}

// Scrape fetches the listing and classifies every photo (one vision call per photo).
func (p *Pipeline) Scrape(ctx context.Context, url string) (*Scraped, error) {
	l, err := p.Listings.Get(ctx, url)
	if err != nil {
		return nil, err
	}
	n := p.Parallel
	if n <= 0 {
		n = 4
	}
	rooms := make([]Room, len(l.Photos))
	errs := make([]error, len(l.Photos))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, ph := range l.Photos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rooms[i], errs[i] = p.classify(ctx, ph)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("reno: classifying photo %d of listing %s: %w", i+1, l.ID, err)
		}
	}
	// Room indexes count per type, in photo order; rooms with no stated area share the rest.
	seen := map[string]int{}
	stated, unknown := 0.0, 0
	for i := range rooms {
		rooms[i].Index = seen[rooms[i].Type]
		seen[rooms[i].Type]++
		if rooms[i].AreaM2 > 0 {
			stated += rooms[i].AreaM2
		} else {
			unknown++
		}
	}
	if unknown > 0 {
		rest := (l.AreaM2 - stated) / float64(unknown)
		if rest < 4 {
			rest = 4
		}
		for i := range rooms {
			if rooms[i].AreaM2 == 0 {
				rooms[i].AreaM2 = rest
			}
		}
	}
	return &Scraped{Listing: l, Rooms: rooms}, nil
}

func (p *Pipeline) classify(ctx context.Context, ph listing.Photo) (Room, error) {
	img, mt, err := p.Listings.Photo(ctx, ph.URL)
	if err != nil {
		return Room{}, err
	}
	msg := message.Message{Role: message.RoleUser, Parts: []message.Part{
		{Type: message.PartText, Text: "Fotografia do anúncio."},
		{Type: message.PartImage, ImageURL: "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(img)},
	}}
	resp, err := p.Vision.Generate(ctx, &model.Request{Messages: []message.Message{message.System(classifyPrompt), msg}, Schema: classifySchema})
	if err != nil {
		return Room{}, err
	}
	var c classification
	raw := resp.Structured
	if raw == nil {
		raw = json.RawMessage(resp.Message.Content)
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return Room{}, fmt.Errorf("the vision model's answer is not the classification: %w", err)
	}
	c.RoomType = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(c.RoomType), " ", "_"))
	if !contains(RoomTypes, c.RoomType) {
		c.RoomType = "other"
	}
	if !contains(Conditions, c.Condition) {
		c.Condition = Fair
	}
	return Room{Type: c.RoomType, Condition: c.Condition, Features: c.Features, AreaM2: ph.AreaM2, Photo: ph.URL}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Analyze builds a Result from a scraped listing (or from cached rooms) and preferences.
func Analyze(l *listing.Listing, propertyID string, rooms []Room, p Preferences) *Result {
	est := Estimate(rooms, p)
	lo, hi := Totals(est)
	q := p.Quality
	if q == "" {
		q = "medio"
	}
	return &Result{PropertyID: propertyID, Title: l.Title, Typology: l.Typology, Location: l.Location, Price: l.Price, AreaM2: l.AreaM2,
		Rooms: est, TotalMin: lo, TotalMax: hi, Quality: q, Skills: p.Skills}
}
