// Package catalog is the offline marketplace: a generated catalogue of products with UPCs and
// 90 days of sold and active listings (condition effects, outliers, near-miss decoys such as
// cases and boxes), served in eBay's wire format (OAuth token, Browse search and getItem,
// Marketplace Insights sales) by an http.Handler, so the real client in package ebay reads it
// exactly as it reads eBay. Everything is deterministic for a given day.
package catalog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Product is one product of the catalogue.
type Product struct {
	ID       int
	Brand    string
	Model    string // the model name with its variant ("WH-1000XM4 Black")
	Family   string // the model name without the variant ("WH-1000XM4")
	Variant  string
	Category string
	Noun     string // what sellers call it in titles ("headphones")
	MPN      string
	UPC      string
	// NewPrice is the price new, in USD.
	NewPrice float64
	// Sold and Active are how many sold (90 days) and active listings it has.
	Sold, Active int
	// MPNTitles is the share of its listings titled by MPN rather than by model name.
	MPNTitles float64
}

// Title is the product's name as a seller would write it.
func (p Product) Title() string { return p.Brand + " " + p.Model + " " + p.Noun }

// Listing is one generated listing.
type Listing struct {
	ID        string
	ProductID int // -1 for none
	Title     string
	Price     float64
	Condition string
	CondID    string
	Sold      bool
	SoldAt    time.Time
	ListedAt  time.Time
	Kind      string // "normal", "outlier", "decoy"
}

// Conditions and their effect on price, as eBay names them.
var Conditions = []struct {
	Name, ID string
	Factor   float64
	Share    float64
}{
	{"New", "1000", 1.00, 0.18},
	{"Open box", "1500", 0.90, 0.08},
	{"Certified - Refurbished", "2000", 0.82, 0.07},
	{"Used", "3000", 0.68, 0.57},
	{"For parts or not working", "7000", 0.28, 0.10},
}

type family struct {
	brand, model, category, noun, mpn string
	price                             float64
	variants                          []string
	factors                           []float64
	sold, active                      int
	mpnTitles                         float64
}

// families from which the products are made; each variant is a product.
var families = []family{
	{"Apple", "iPhone 13 Pro Max", "Cell Phones & Smartphones", "smartphone unlocked", "MLK", 1099, []string{"128GB", "256GB", "512GB"}, []float64{0.62, 0.70, 0.80}, 34, 12, 0},
	{"Apple", "iPhone 12", "Cell Phones & Smartphones", "smartphone unlocked", "MGH", 799, []string{"64GB", "128GB"}, []float64{0.42, 0.48}, 30, 14, 0},
	{"Samsung", "Galaxy S21", "Cell Phones & Smartphones", "smartphone", "SM-G991U", 799, []string{"128GB", "256GB"}, []float64{0.38, 0.44}, 22, 10, 0},
	{"Nintendo", "Switch OLED", "Video Game Consoles", "console", "HEG-S-KA", 349, []string{"White", "Neon"}, []float64{0.92, 0.90}, 28, 9, 0},
	{"Nintendo", "Switch Lite", "Video Game Consoles", "handheld console", "HDH-S", 199, []string{"Coral", "Gray", "Turquoise"}, []float64{0.78, 0.74, 0.75}, 18, 8, 0},
	{"Sony", "WH-1000XM4", "Headphones", "wireless noise cancelling headphones", "WH1000XM4", 349, []string{"Black", "Silver"}, []float64{0.62, 0.60}, 32, 11, 0},
	{"Sony", "WH-1000XM5", "Headphones", "wireless noise cancelling headphones", "WH1000XM5", 399, []string{"Black", "Silver"}, []float64{0.74, 0.72}, 26, 10, 0},
	{"Bose", "QuietComfort 45", "Headphones", "headphones", "866724-0100", 329, []string{"Black", "White Smoke"}, []float64{0.62, 0.60}, 20, 8, 0},
	{"Apple", "AirPods Pro", "Headphones", "earbuds", "MQD83AM", 249, []string{"2nd Generation", "1st Generation"}, []float64{0.74, 0.46}, 36, 15, 0},
	{"LEGO", "Star Wars Millennium Falcon", "LEGO Sets", "set", "75257", 169, []string{"75257", "75375"}, []float64{0.85, 0.62}, 16, 7, 0},
	{"LEGO", "Technic Lamborghini Sian", "LEGO Sets", "set", "42115", 449, []string{"42115"}, []float64{0.96}, 9, 4, 0},
	{"Canon", "EF 50mm f/1.8 STM", "Camera Lenses", "lens", "0570C002", 125, []string{"Lens"}, []float64{0.78}, 24, 9, 0},
	{"Canon", "EF 100mm f/2.8L Macro IS USM", "Camera Lenses", "lens", "3554B002", 899, []string{"Lens"}, []float64{0.70}, 12, 3, 0.75},
	{"KitchenAid", "Artisan 5 Quart Stand Mixer", "Stand Mixers", "tilt-head", "KSM150PS", 449, []string{"Empire Red", "Onyx Black", "Silver"}, []float64{0.58, 0.56, 0.55}, 20, 9, 0},
	{"Dyson", "V8 Absolute", "Vacuum Cleaners", "cordless vacuum", "V8ABS", 399, []string{"Cordless"}, []float64{0.42}, 22, 12, 0},
	{"Dyson", "V11 Torque Drive", "Vacuum Cleaners", "cordless vacuum", "V11TD", 599, []string{"Cordless"}, []float64{0.52}, 17, 8, 0},
	{"Apple", "Watch Series 7", "Smart Watches", "GPS smartwatch", "MKN", 399, []string{"41mm", "45mm"}, []float64{0.50, 0.56}, 25, 11, 0},
	{"Apple", "iPad Air 4th Gen", "Tablets", "tablet WiFi", "MYF", 599, []string{"64GB", "256GB"}, []float64{0.60, 0.70}, 21, 10, 0},
	{"GoPro", "HERO10 Black", "Action Cameras", "action camera", "CHDHX-101", 449, []string{"Camera"}, []float64{0.56}, 19, 9, 0},
	{"Amazon", "Kindle Paperwhite 11th Gen", "eReaders", "e-reader", "M2L3EK", 149, []string{"8GB", "16GB"}, []float64{0.62, 0.66}, 27, 12, 0},
	{"Sony", "PlayStation 5", "Video Game Consoles", "console", "CFI-1215", 499, []string{"Disc Edition", "Digital Edition"}, []float64{0.86, 0.76}, 33, 16, 0},
	{"Microsoft", "Xbox Series X", "Video Game Consoles", "console", "RRT-00001", 499, []string{"1TB"}, []float64{0.84}, 24, 12, 0},
	{"Microsoft", "Xbox Series S", "Video Game Consoles", "console", "RRS-00001", 299, []string{"512GB"}, []float64{0.80}, 23, 12, 0},
	{"Garmin", "Forerunner 245", "Smart Watches", "GPS running watch", "010-02120", 299, []string{"Music", "Standard"}, []float64{0.56, 0.48}, 15, 6, 0},
	{"Vitamix", "5200 Blender", "Blenders", "blender", "VM0103", 449, []string{"Black", "Red"}, []float64{0.58, 0.56}, 13, 6, 0},
	{"Sony", "Alpha a6400", "Digital Cameras", "mirrorless camera body", "ILCE-6400", 899, []string{"Body Only", "Kit 16-50mm"}, []float64{0.72, 0.80}, 14, 7, 0},
	{"Instant Pot", "Duo 7-in-1", "Pressure Cookers", "pressure cooker", "IP-DUO", 99, []string{"6 Quart", "8 Quart"}, []float64{0.55, 0.60}, 26, 14, 0},
}

// Catalogue is the generated data: products and their listings as of a day.
type Catalogue struct {
	Now      time.Time
	Products []Product
	Listings []Listing
	byUPC    map[string]int
	byItem   map[string]int
	tokens   []map[string]bool // of each listing's title
}

// decoy title patterns: listings that match a product's words but are not the product.
var decoys = []struct {
	title  string
	factor float64
}{
	{"Case cover for %s %s", 0.04},
	{"%s %s box only no device", 0.03},
	{"Replacement charger cable for %s %s", 0.05},
	{"%s %s screen protector 3 pack", 0.02},
	{"%s %s LOT OF 2 for parts", 0.45},
}

// Generate makes the catalogue as of now (truncated to the day): the same day gives the same
// data.
func Generate(now time.Time) *Catalogue {
	now = now.UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
	c := &Catalogue{Now: now, byUPC: map[string]int{}, byItem: map[string]int{}}
	id := 0
	for fi, f := range families {
		for vi, v := range f.variants {
			model := f.model + " " + v
			if v == f.mpn || v == "Lens" || v == "Camera" || v == "Cordless" {
				model = f.model
			}
			mpn := f.mpn
			if len(f.variants) > 1 {
				mpn = fmt.Sprintf("%s%c", f.mpn, 'A'+vi)
			}
			p := Product{ID: id, Brand: f.brand, Model: model, Family: f.model, Variant: v, Category: f.category, Noun: f.noun,
				MPN: mpn, UPC: upc(fi, vi), NewPrice: f.price, Sold: f.sold - vi*3, Active: f.active - vi, MPNTitles: f.mpnTitles}
			p.NewPrice = math.Round(f.price/f.factors[0]*f.factors[vi]*100) / 100
			if p.Sold < 3 {
				p.Sold = 3
			}
			if p.Active < 1 {
				p.Active = 1
			}
			c.byUPC[p.UPC] = id
			c.Products = append(c.Products, p)
			id++
		}
	}
	for _, p := range c.Products {
		c.listingsFor(p)
	}
	c.tokens = make([]map[string]bool, len(c.Listings))
	for i, l := range c.Listings {
		c.byItem[l.ID] = i
		c.tokens[i] = Tokens(l.Title)
	}
	return c
}

// upc returns a valid 12-digit UPC-A for family f, variant v.
func upc(f, v int) string {
	body := fmt.Sprintf("8%03d%03d%04d", 400+f*7, 100+v*13, (f*131+v*17)%10000)[:11]
	sum := 0
	for i, r := range body {
		d := int(r - '0')
		if i%2 == 0 {
			sum += 3 * d
		} else {
			sum += d
		}
	}
	return body + fmt.Sprint((10-sum%10)%10)
}

// ValidUPC reports whether s is a 12-digit UPC-A with a correct check digit.
func ValidUPC(s string) bool {
	if len(s) != 12 {
		return false
	}
	sum := 0
	for i, r := range s {
		if r < '0' || r > '9' {
			return false
		}
		d := int(r - '0')
		if i == 11 {
			return (10-sum%10)%10 == d
		}
		if i%2 == 0 {
			sum += 3 * d
		} else {
			sum += d
		}
	}
	return false
}

func (c *Catalogue) listingsFor(p Product) {
	rng := rand.New(rand.NewPCG(uint64(p.ID)+1, 0x11f0))
	title := func(cond string) string {
		t := p.Title()
		if p.MPNTitles > 0 && rng.Float64() < p.MPNTitles {
			t = p.Brand + " " + p.MPN + " " + p.Noun
		}
		if cond != "" && rng.IntN(2) == 0 {
			t += " - " + cond
		}
		return t
	}
	pick := func() (string, string, float64) {
		x := rng.Float64()
		for _, cd := range Conditions {
			if x < cd.Share {
				return cd.Name, cd.ID, cd.Factor
			}
			x -= cd.Share
		}
		last := Conditions[3]
		return last.Name, last.ID, last.Factor
	}
	n := 0
	add := func(l Listing) {
		l.ID = fmt.Sprintf("v1|%d%06d|0", 1100+p.ID, n)
		l.ProductID = p.ID
		n++
		c.Listings = append(c.Listings, l)
	}
	for i := 0; i < p.Sold; i++ {
		cond, cid, f := pick()
		age := rng.IntN(90)
		// Prices drift down about 8% over the 90 days; noise about ±10%.
		drift := 1 + 0.08*float64(age)/90
		price := p.NewPrice * f * drift * (0.9 + 0.2*rng.Float64())
		kind := "normal"
		if rng.Float64() < 0.06 {
			kind = "outlier"
			if rng.IntN(2) == 0 {
				price *= 2.6 + rng.Float64() // a bundle, or a typo
			} else {
				price *= 0.18
			}
		}
		sold := c.Now.Add(-time.Duration(age)*24*time.Hour - time.Duration(rng.IntN(20))*time.Hour)
		add(Listing{Title: title(cond), Price: round2(price), Condition: cond, CondID: cid, Sold: true, SoldAt: sold,
			ListedAt: sold.Add(-time.Duration(1+rng.IntN(21)) * 24 * time.Hour), Kind: kind})
	}
	for i := 0; i < p.Active; i++ {
		cond, cid, f := pick()
		price := p.NewPrice * f * 1.08 * (0.92 + 0.2*rng.Float64())
		add(Listing{Title: title(cond), Price: round2(price), Condition: cond, CondID: cid,
			ListedAt: c.Now.Add(-time.Duration(rng.IntN(30*24)) * time.Hour), Kind: "normal"})
	}
	for i, d := range decoys {
		if (p.ID+i)%2 == 0 {
			continue
		}
		t := fmt.Sprintf(d.title, p.Brand, p.Model)
		sold := c.Now.Add(-time.Duration(rng.IntN(80)) * 24 * time.Hour)
		add(Listing{Title: t, Price: round2(math.Max(4.99, p.NewPrice*d.factor)), Condition: "New", CondID: "1000", Sold: i%2 == 0,
			SoldAt: sold, ListedAt: sold.Add(-72 * time.Hour), Kind: "decoy"})
	}
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// ProductByUPC returns the product with this UPC.
func (c *Catalogue) ProductByUPC(u string) (Product, bool) {
	i, ok := c.byUPC[u]
	if !ok {
		return Product{}, false
	}
	return c.Products[i], true
}

// Find returns the first product whose brand and model contain every word of s (case folded).
func (c *Catalogue) Find(s string) (Product, bool) {
	for _, p := range c.Products {
		if matches(Tokens(p.Brand+" "+p.Model), Tokens(s)) {
			return p, true
		}
	}
	return Product{}, false
}

// Search returns the listings (sold or active) whose titles hold every keyword of q, newest
// first, as eBay's keyword search does.
func (c *Catalogue) Search(q string, sold bool) []Listing {
	want := Tokens(q)
	if len(want) == 0 {
		return nil
	}
	var out []Listing
	for i, l := range c.Listings {
		if l.Sold == sold && matches(c.tokens[i], want) {
			out = append(out, l)
		}
	}
	// Newest first: sold by sale date, active by listing date.
	sort.SliceStable(out, func(i, j int) bool { return newer(out[i], out[j]) })
	return out
}

func newer(a, b Listing) bool {
	if a.Sold {
		return a.SoldAt.After(b.SoldAt)
	}
	return a.ListedAt.After(b.ListedAt)
}

func matches(have map[string]bool, want map[string]bool) bool {
	for w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

// Tokens splits text into lower-case words (letters, digits, '/', '.', '-' kept inside words;
// "-" alone dropped).
func Tokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '/' || r == '.' || r == '-')
	}) {
		w = strings.Trim(w, ".-/")
		if w != "" {
			out[w] = true
		}
	}
	return out
}
