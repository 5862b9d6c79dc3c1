package listing

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/httpclient"
)

// demoRoom is a photographed room of a demo listing: what its photo's label says.
type demoRoom struct {
	tag, room, condition string
	area                 float64
	features             []string
}

type demoListing struct {
	id, title, location, typology string
	price, area                   float64
	year                          int
	energy                        string
	description                   string
	rooms                         []demoRoom
}

// The demo listings: invented flats in real Lisbon and Porto neighbourhoods, at prices of their
// markets in 2025.
var demoListings = []demoListing{
	{"12345", "Apartamento T2 na Rua de São Miguel", "Alfama, Lisboa", "T2", 180000, 65, 1940, "E",
		"T2 num prédio antigo de Alfama, com vista de rio da sala. Precisa de obras na cozinha e na casa de banho.",
		[]demoRoom{{"Cozinha", "kitchen", "poor", 8, []string{"azulejos antigos", "humidade", "bancada partida"}},
			{"Casa de banho", "bathroom", "needs_renovation", 4, []string{"banheira antiga", "azulejos antigos"}},
			{"Sala", "living_room", "needs_renovation", 20, []string{"soalho degradado", "vista rio"}},
			{"Quarto", "bedroom", "fair", 12, []string{"soalho de madeira"}},
			{"Quarto", "bedroom", "good", 10, []string{"janela ampla"}}}},
	{"33445566", "Apartamento T2 na Rua da Graça", "Graça, Lisboa", "T2", 230000, 72, 1955, "D",
		"T2 luminoso na Graça, junto ao miradouro. Cozinha remodelada, casa de banho original.",
		[]demoRoom{{"Cozinha", "kitchen", "good", 9, []string{"cozinha equipada", "placa de indução"}},
			{"Casa de banho", "bathroom", "needs_renovation", 5, []string{"azulejos antigos", "infiltrações"}},
			{"Sala", "living_room", "fair", 22, []string{"tetos altos"}},
			{"Quarto", "bedroom", "fair", 13, nil}}},
	{"40112233", "Apartamento T1 na Rua dos Poiais de São Bento", "Santos-o-Velho, Lisboa", "T1", 265000, 48, 1900, "F",
		"T1 em prédio pombalino, para remodelação total.",
		[]demoRoom{{"Cozinha", "kitchen", "poor", 6, []string{"canalização antiga", "humidade"}},
			{"Casa de banho", "bathroom", "poor", 3.5, []string{"sanita partida", "bolor"}},
			{"Sala", "living_room", "needs_renovation", 18, []string{"soalho degradado"}},
			{"Quarto", "bedroom", "needs_renovation", 11, []string{"rachas nas paredes"}}}},
	{"40223344", "Apartamento T3 na Avenida de Roma", "Alvalade, Lisboa", "T3", 420000, 110, 1962, "C",
		"T3 amplo em Alvalade, bom estado geral, casa de banho de serviço a remodelar.",
		[]demoRoom{{"Cozinha", "kitchen", "fair", 12, []string{"armários gastos"}},
			{"Casa de banho", "bathroom", "good", 6, nil},
			{"Casa de banho", "bathroom", "needs_renovation", 3, []string{"azulejos antigos"}},
			{"Sala", "living_room", "good", 30, []string{"varanda"}},
			{"Quarto", "bedroom", "good", 15, nil}}},
	{"40334455", "Apartamento T2 na Rua Morais Soares", "Arroios, Lisboa", "T2", 295000, 70, 1948, "E",
		"T2 em Arroios, perto do metro. Para renovar.",
		[]demoRoom{{"Cozinha", "kitchen", "needs_renovation", 8, []string{"azulejos antigos"}},
			{"Casa de banho", "bathroom", "needs_renovation", 4, []string{"banheira antiga"}},
			{"Sala", "living_room", "fair", 19, nil},
			{"Quarto", "bedroom", "fair", 12, []string{"soalho gasto"}}}},
	{"40445566", "Moradia T3 na Rua Direita de Benfica", "Benfica, Lisboa", "T3", 385000, 130, 1935, "F",
		"Moradia antiga com quintal, a necessitar de obras profundas.",
		[]demoRoom{{"Cozinha", "kitchen", "poor", 14, []string{"humidade", "instalação elétrica antiga"}},
			{"Casa de banho", "bathroom", "poor", 6, []string{"infiltrações"}},
			{"Sala", "living_room", "needs_renovation", 35, []string{"tetos degradados"}},
			{"Exterior", "exterior", "needs_renovation", 40, []string{"quintal", "muro rachado"}}}},
	{"40556677", "Apartamento T1 na Rua do Benformoso", "Mouraria, Lisboa", "T1", 199000, 42, 1920, "F",
		"T1 na Mouraria, ideal para investimento. Obras necessárias.",
		[]demoRoom{{"Cozinha", "kitchen", "needs_renovation", 5, []string{"bancada gasta"}},
			{"Casa de banho", "bathroom", "needs_renovation", 3, []string{"bolor"}},
			{"Sala", "living_room", "fair", 16, nil}}},
	{"50112233", "Apartamento T2 na Rua de Cedofeita", "Cedofeita, Porto", "T2", 245000, 78, 1950, "D",
		"T2 em Cedofeita, perto da Baixa. Cozinha antiga, resto em razoável estado.",
		[]demoRoom{{"Cozinha", "kitchen", "needs_renovation", 9, []string{"azulejos antigos", "fogão antigo"}},
			{"Casa de banho", "bathroom", "fair", 5, nil},
			{"Sala", "living_room", "fair", 24, []string{"soalho de madeira"}},
			{"Quarto", "bedroom", "good", 13, nil}}},
	{"50223344", "Apartamento T1 na Rua das Flores", "Ribeira, Porto", "T1", 275000, 50, 1890, "E",
		"T1 em prédio histórico da Ribeira, com potencial para alojamento local.",
		[]demoRoom{{"Cozinha", "kitchen", "poor", 6, []string{"humidade", "bolor"}},
			{"Casa de banho", "bathroom", "poor", 3, []string{"infiltrações"}},
			{"Sala", "living_room", "needs_renovation", 20, []string{"tetos em estuque degradados"}}}},
	{"50334455", "Apartamento T3 na Rua de Costa Cabral", "Paranhos, Porto", "T3", 260000, 105, 1975, "D",
		"T3 em Paranhos, bom estado, com garagem.",
		[]demoRoom{{"Cozinha", "kitchen", "fair", 11, []string{"armários gastos"}},
			{"Casa de banho", "bathroom", "good", 5, nil},
			{"Sala", "living_room", "good", 28, nil},
			{"Quarto", "bedroom", "fair", 14, nil}}},
	{"50445566", "Apartamento T2 na Rua de Santa Catarina", "Bonfim, Porto", "T2", 210000, 74, 1940, "F",
		"T2 no Bonfim para remodelar, muito luminoso.",
		[]demoRoom{{"Cozinha", "kitchen", "needs_renovation", 8, []string{"azulejos antigos"}},
			{"Casa de banho", "bathroom", "poor", 4, []string{"sanita partida"}},
			{"Sala", "living_room", "needs_renovation", 21, []string{"soalho degradado"}},
			{"Quarto", "bedroom", "needs_renovation", 12, []string{"humidade"}}}},
	{"50556677", "Apartamento T1 na Rua da Senhora da Luz", "Foz do Douro, Porto", "T1", 320000, 55, 1985, "C",
		"T1 na Foz, a dois minutos da praia. Em bom estado.",
		[]demoRoom{{"Cozinha", "kitchen", "good", 7, nil},
			{"Casa de banho", "bathroom", "fair", 4, []string{"azulejos antigos"}},
			{"Sala", "living_room", "good", 22, []string{"varanda"}}}},
}

// DemoIDs lists the demo listings' IDs.
func DemoIDs() []string {
	out := make([]string, 0, len(demoListings))
	for _, d := range demoListings {
		out = append(out, d.id)
	}
	return out
}

func (d demoListing) listing() *Listing {
	l := &Listing{ID: d.id, URL: CanonicalURL(d.id), Title: d.title, Location: d.location, Price: d.price, AreaM2: d.area,
		Typology: d.typology, Description: d.description,
		Features: []string{fmt.Sprintf("%s m² área bruta", strconv.FormatFloat(d.area, 'f', -1, 64)), d.typology,
			fmt.Sprintf("Construído em %d", d.year), "Certificado energético: " + d.energy}}
	for i, r := range d.rooms {
		l.Photos = append(l.Photos, Photo{URL: fmt.Sprintf("/imovel/%s/foto/%d.png", d.id, i+1), Tag: r.tag, AreaM2: r.area})
	}
	return l
}

// DemoPhoto is a small PNG whose iTXt chunk carries its label (room, condition, features), which
// a vision model told to read labels (and the offline model) reports.
func DemoPhoto(room, condition string, features []string, shade uint8) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 12))
	for y := 0; y < 12; y++ {
		for x := 0; x < 16; x++ {
			img.Set(x, y, color.RGBA{shade, uint8(128 + x*4), uint8(96 + y*8), 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	label, _ := json.Marshal(map[string]any{"room": room, "condition": condition, "features": features})
	return withText(buf.Bytes(), "Description", label)
}

// withText inserts an iTXt chunk (UTF-8 text, uncompressed, no language) after a PNG's IHDR. A
// tEXt chunk is Latin-1 by the PNG specification, so a reader shows "fogão" written there in
// UTF-8 as "fogÃ£o".
func withText(pngData []byte, key string, value []byte) []byte {
	const ihdrEnd = 8 + 4 + 4 + 13 + 4
	payload := append([]byte(key+"\x00\x00\x00\x00\x00"), value...)
	var chunk bytes.Buffer
	_ = binary.Write(&chunk, binary.BigEndian, uint32(len(payload)))
	body := append([]byte("iTXt"), payload...)
	chunk.Write(body)
	_ = binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(body))
	out := append([]byte{}, pngData[:ihdrEnd]...)
	out = append(out, chunk.Bytes()...)
	return append(out, pngData[ihdrEnd:]...)
}

// Demo is a handler that answers like the site for the demo listings: detail pages at
// /imovel/<id>/ and photos at /imovel/<id>/foto/<n>.png; anything else is a 404.
func Demo() http.Handler {
	pages := map[string]string{}
	photos := map[string][]byte{}
	for i, d := range demoListings {
		pages["/imovel/"+d.id+"/"] = Render(d.listing())
		for j, r := range d.rooms {
			photos[fmt.Sprintf("/imovel/%s/foto/%d.png", d.id, j+1)] = DemoPhoto(r.room, r.condition, r.features, uint8(40*i+10*j))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := r.URL.Path
		if !strings.HasSuffix(p, "/") && !strings.HasSuffix(p, ".png") {
			p += "/"
		}
		if page, ok := pages[p]; ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(page))
			return
		}
		if img, ok := photos[p]; ok {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(img)
			return
		}
		http.Error(w, "<html><body><h1>Anúncio não encontrado</h1></body></html>", http.StatusNotFound)
	})
}

// HandlerTransport is an http.RoundTripper that answers every request with h, in process: the
// demo client's requests go through the whole client (URL building, status handling, parsing)
// without a socket.
type HandlerTransport struct{ Handler http.Handler }

// RoundTrip serves req with the handler.
func (t HandlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.Handler.ServeHTTP(rec, req.WithContext(context.WithoutCancel(req.Context())))
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// NewDemo returns a client that reads the demo listings through HandlerTransport.
func NewDemo() (*Client, error) {
	return New(DefaultBaseURL, &httpclient.Options{Transport: HandlerTransport{Handler: Demo()}, Retries: -1})
}

// DemoList describes the demo listings (id, title, place, price) for the docs and the UI.
func DemoList() []Listing {
	out := make([]Listing, 0, len(demoListings))
	for _, d := range demoListings {
		out = append(out, *d.listing())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Location < out[j].Location })
	return out
}
