package listing_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
)

func TestID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://www.idealista.pt/imovel/12345/":          "12345",
		"https://www.idealista.pt/imovel/33445566":        "33445566",
		"http://idealista.pt/imovel/33445566/?xtmc=1#fot": "33445566",
		"33445566": "33445566",
	} {
		if got, err := listing.ID(in); err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"https://www.example.com/imovel/12345/", "https://www.idealista.pt/comprar-casas/lisboa/", "olá"} {
		if _, err := listing.ID(bad); !errors.Is(err, listing.ErrBadURL) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// The client reads pages from a local server in the site's format, by its base URL.
func TestClientAgainstLocalServer(t *testing.T) {
	t.Parallel()
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		listing.Demo().ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := listing.New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := c.Get(ctx, "https://www.idealista.pt/imovel/12345/")
	if err != nil {
		t.Fatal(err)
	}
	if l.ID != "12345" || l.Title != "Apartamento T2 na Rua de São Miguel" || l.Location != "Alfama, Lisboa" || l.Price != 180000 ||
		l.AreaM2 != 65 || l.Typology != "T2" || len(l.Photos) != 5 || l.Photos[0].Tag != "Cozinha" || l.Photos[0].AreaM2 != 8 ||
		l.URL != "https://www.idealista.pt/imovel/12345/" || !strings.Contains(l.Description, "Alfama") {
		t.Fatalf("listing %+v", l)
	}
	img, mt, err := c.Photo(ctx, l.Photos[0].URL)
	if err != nil || mt != "image/png" {
		t.Fatal(err, mt)
	}
	// The photo carries its label, which the offline model reads as a vision model would see.
	got, err := offline.DescribeImage(message.Part{Type: message.PartImage, MIMEType: mt, ImageURL: "data:image/png;base64," + b64(img)})
	if err != nil || got["room"] != "kitchen" || got["condition"] != "poor" {
		t.Fatalf("photo label %v %v", got, err)
	}
	if _, err := c.Get(ctx, "https://www.idealista.pt/imovel/99999999/"); !errors.Is(err, listing.ErrRemoved) {
		t.Errorf("missing listing: %v", err)
	}
	if strings.Join(paths, ",") != "/imovel/12345/,/imovel/12345/foto/1.png,/imovel/99999999/" {
		t.Errorf("paths %v", paths)
	}
}

func TestDemoHasLisbonAndPorto(t *testing.T) {
	t.Parallel()
	c, err := listing.NewDemo()
	if err != nil {
		t.Fatal(err)
	}
	lisboa, porto := 0, 0
	for _, id := range listing.DemoIDs() {
		l, err := c.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Photos) < 3 || l.Price == 0 || l.AreaM2 == 0 {
			t.Errorf("%s: %+v", id, l)
		}
		switch {
		case strings.HasSuffix(l.Location, "Lisboa"):
			lisboa++
		case strings.HasSuffix(l.Location, "Porto"):
			porto++
		}
	}
	if lisboa+porto < 10 || lisboa == 0 || porto == 0 {
		t.Errorf("%d Lisbon and %d Porto listings", lisboa, porto)
	}
}

func TestParseRejectsOtherPages(t *testing.T) {
	t.Parallel()
	if _, err := listing.Parse("<html><body>captcha</body></html>"); err == nil {
		t.Error("a page with no listing parsed")
	}
	var se *httpclient.StatusError
	_ = se
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// A photo's label keeps its accents: "fogão antigo" is read as written, not as "fogÃ£o antigo"
// (a tEXt chunk is Latin-1; the label is UTF-8).
func TestDemoPhotoLabelKeepsAccents(t *testing.T) {
	t.Parallel()
	img := listing.DemoPhoto("kitchen", "needs_renovation", []string{"fogão antigo", "azulejos rachados"}, 10)
	got, err := offline.DescribeImage(message.Part{Type: message.PartImage, MIMEType: "image/png", ImageURL: "data:image/png;base64," + b64(img)})
	if err != nil {
		t.Fatal(err)
	}
	if f := fmt.Sprint(got["features"]); !strings.Contains(f, "fogão antigo") {
		t.Fatalf("features %q, want fogão antigo (label %v)", f, got)
	}
}
