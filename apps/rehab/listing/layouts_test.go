package listing_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/httpclient"
)

// site serves saved pages of the site's layouts (testdata/pages) at their listings' paths, one
// listing withdrawn with 410, the rest 404.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"/imovel/51234567/": "current.html",
		"/imovel/52345678/": "older.html",
		"/imovel/53456789/": "no-photos.html",
		"/imovel/54567890/": "removed.html",
		"/imovel/55678901/": "search-page.html",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/imovel/56789012/" {
			http.Error(w, "Gone", http.StatusGone)
			return
		}
		name, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile("testdata/pages/" + name)
		if err != nil {
			t.Error(err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLayouts(t *testing.T) {
	t.Parallel()
	srv := site(t)
	c, err := listing.New(srv.URL, &httpclient.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, want := range []listing.Listing{
		{ID: "51234567", Title: "Apartamento T2 na Rua dos Lagares", Location: "Graça, Lisboa", Price: 245000, AreaM2: 78, Typology: "T2",
			Description: "T2 com muita luz na Graça, à venda.", Photos: []listing.Photo{{URL: "https://img4.idealista.pt/blur/WEB_DETAIL-XL-L/0/id.pt/ee/a2/1.jpg", Tag: "Sala"}, {Tag: "Cozinha"}, {Tag: "Casa de banho"}}},
		{ID: "52345678", Title: "Moradia T4 para recuperar", Location: "Cedofeita, Porto", Price: 389000, AreaM2: 160, Typology: "T4",
			Description: "Moradia de três pisos com quintal", Photos: []listing.Photo{{URL: "https://img3.idealista.pt/blur/WEB_DETAIL/0/id.pt/11/22/a.jpg", Tag: "Fachada"}, {Tag: "Cozinha"}}},
		{ID: "53456789", Title: "Apartamento T1 na Avenida Almirante Reis", Location: "Arroios, Lisboa", Price: 199500, AreaM2: 45, Typology: "T1",
			Description: "T1 em prédio com elevador"},
	} {
		l, err := c.Get(ctx, "https://www.idealista.pt/imovel/"+want.ID+"/")
		if err != nil {
			t.Errorf("%s: %v", want.ID, err)
			continue
		}
		if l.ID != want.ID || l.Title != want.Title || l.Location != want.Location || l.Price != want.Price || l.AreaM2 != want.AreaM2 ||
			l.Typology != want.Typology || !strings.HasPrefix(l.Description, want.Description) || l.URL != "https://www.idealista.pt/imovel/"+want.ID+"/" {
			t.Errorf("%s:\n got %+v\nwant %+v", want.ID, l, want)
		}
		if len(l.Photos) != len(want.Photos) {
			t.Errorf("%s: photos %+v", want.ID, l.Photos)
			continue
		}
		for i, p := range want.Photos {
			if p.URL != "" && l.Photos[i].URL != p.URL || l.Photos[i].Tag != p.Tag || !strings.HasPrefix(l.Photos[i].URL, "https://img") {
				t.Errorf("%s: photo %d %+v, want %+v", want.ID, i, l.Photos[i], p)
			}
		}
	}
	for id, want := range map[string]error{"54567890": listing.ErrRemoved, "56789012": listing.ErrRemoved, "57890123": listing.ErrRemoved, "55678901": listing.ErrUnreadable} {
		if _, err := c.Get(ctx, id); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", id, err, want)
		}
	}
}
