package catalog

import (
	"net/url"
	"strings"

	"github.com/trellis-go/trellis/apps/listforge/store"
)

// pixel is a 1x1 PNG: the demo photos' pixels; what they show is in their labels.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// Photo returns a demo photo as a data URL whose parameters are its labels (what the offline
// vision reads; a real vision model sees the picture).
func Photo(labels ...string) string {
	var b strings.Builder
	b.WriteString("data:image/png")
	for i := 0; i+1 < len(labels); i += 2 {
		b.WriteString(";" + labels[i] + "=" + url.QueryEscape(labels[i+1]))
	}
	b.WriteString(";base64," + pixel)
	return b.String()
}

// Demo paths, the demo items' keys in their attributes ("demo").
const (
	DemoUPC       = "upc_match"
	DemoLabels    = "labels"
	DemoRefine    = "refine_loop"
	DemoNoComps   = "no_comps"
	DemoNotReady  = "not_ready"
	DemoTitleOnly = "title_only"
)

// DemoItems are items whose photos lead research through each path: a UPC on the box, brand
// and model read from labels, a rare lens that needs a refine pass by part number, a handmade
// vase with no comparables, a draft with nothing to research, and a console known only by its
// title.
func DemoItems(c *Catalogue) []store.Item {
	price := func(p float64) *float64 { return &p }
	xm4, _ := c.Find("Sony WH-1000XM4 Black")
	return []store.Item{
		{Title: "Noise cancelling headphones", Description: "Over-ear wireless headphones, works perfectly, light wear on the pads. Box included.",
			Condition: "Used", DefaultPrice: price(180), LifecycleStatus: "ready",
			Media: []store.Media{{Type: "image", URL: Photo("category", "headphones", "condition", "used, light wear"), Caption: "front"},
				{Type: "image", URL: Photo("upc", xm4.UPC, "text", "UPC on the box"), Caption: "box label"}},
			Attributes: map[string]any{"demo": DemoUPC}},
		{Title: "Red stand mixer", Description: "Tilt-head stand mixer with bowl, whisk, paddle and dough hook.", Condition: "Used",
			DefaultPrice: price(250), LifecycleStatus: "ready",
			Media:      []store.Media{{Type: "image", URL: Photo("brand", "KitchenAid", "model", "Artisan 5 Quart Stand Mixer Empire Red", "category", "Stand Mixers", "color", "Empire Red")}},
			Attributes: map[string]any{"demo": DemoLabels}},
		{Title: "Canon macro lens", Description: "Macro lens, clean glass, both caps.", Condition: "Used", DefaultPrice: price(600), LifecycleStatus: "ready",
			Media:      []store.Media{{Type: "image", URL: Photo("brand", "Canon", "model", "EF 100mm f/2.8L Macro IS USM", "mpn", "3554B002", "category", "Camera Lenses")}},
			Attributes: map[string]any{"demo": DemoRefine}},
		{Title: "Handmade ceramic vase, blue glaze", Description: "One-off studio pottery vase, 30 cm tall, signed on the base.", Condition: "Used",
			DefaultPrice: price(45), LifecycleStatus: "ready",
			Media:      []store.Media{{Type: "image", URL: Photo("category", "pottery", "text", "signed on the base")}},
			Attributes: map[string]any{"demo": DemoNoComps}},
		{Title: "", Description: "", LifecycleStatus: "draft", Attributes: map[string]any{"demo": DemoNotReady}},
		{Title: "Sony PlayStation 5 Disc Edition console", Description: "PS5 with one controller and cables.", Condition: "Used",
			DefaultPrice: price(380), LifecycleStatus: "ready", Attributes: map[string]any{"demo": DemoTitleOnly}},
	}
}
