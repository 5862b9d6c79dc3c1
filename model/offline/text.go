package offline

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/trellis-go/trellis/fold"
)

// words splits text into lower-case, accent-free words, breaking snake_case, kebab-case and
// camelCase apart ("getItemSnapshot" gives get, item, snapshot).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, fold.String(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

var stop = setOf(`a an and are as at be by can could do does did for from get has have how i in into is it its
me my of on or our please show tell that the their them then there these this those to us was we what when where
which who why will with would you your want need give find let lets about also just some any all one
o os as um uma de do da dos das em no na nos nas por para com que se e eu meu minha qual quais quanto
como sobre este esta isto esse essa ao aos pelo pela mais muito depois
el los las lo una del al con cual cuales mis su sus esto eso favor luego despues usted
les des du et pour avec est une moi mon mes je vous votre quel quelle quels quelles dans sur aux puis ensuite
der die das dem den ein eine einen und ist mit fur von zu auf bitte mir mich ich sie wie welche welcher oder dann danach`)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// synonyms maps everyday words, in the five languages, to the verbs and nouns tool names tend to
// use. Only language-general words belong here: an application's vocabulary arrives in its
// [Pack].
var synonyms = map[string][]string{
	"change": {"update", "set", "edit"}, "modify": {"update", "edit"}, "edit": {"update"}, "set": {"update"},
	"fix": {"update"}, "rename": {"update", "title"},
	"show": {"get", "list", "view"}, "display": {"get", "view"}, "fetch": {"get"}, "retrieve": {"get"},
	"lookup": {"search", "find", "get"}, "look": {"search", "find"}, "find": {"search", "lookup"},
	"search": {"find", "lookup", "query"}, "query": {"search"},
	"delete": {"remove", "archive"}, "drop": {"remove"}, "forget": {"remove", "delete"}, "archive": {"remove"},
	"create": {"add", "new", "save", "write"}, "add": {"save", "create"}, "store": {"save", "write"},
	"remember": {"save", "write", "memory"}, "note": {"write", "save"}, "keep": {"save"},
	"compare": {"comparison", "versus", "diff"}, "versus": {"compare"}, "vs": {"compare"}, "difference": {"compare", "diff"},
	"analyse": {"analysis", "analyze"}, "analyze": {"analysis", "analyse"}, "evaluate": {"analysis"},
	"price": {"pricing", "cost"}, "cost": {"costs", "price", "budget"}, "costs": {"cost"}, "budget": {"cost"},
	"research": {"investigate"},
	"web":      {"internet", "online"}, "internet": {"web"}, "online": {"web"},
	"docs": {"documents", "knowledge"}, "documents": {"knowledge"},
	"buy": {"purchase"}, "purchase": {"buy"},
	// Portuguese
	"analisa": {"analysis"}, "analise": {"analysis"}, "analisar": {"analysis"},
	"guardar": {"save"}, "guarda": {"save"}, "adicionar": {"add", "save"}, "adiciona": {"add", "save"},
	"remover": {"remove"}, "remove": {"remove"}, "apagar": {"remove"}, "procurar": {"search"}, "procura": {"search"}, "pesquisar": {"search"},
	"custos": {"costs"}, "custo": {"costs"}, "perfil": {"profile"}, "orcamento": {"budget"},
	"comparar": {"compare"}, "compara": {"compare"},
	"converter": {"convert"}, "converte": {"convert"}, "preco": {"price"}, "tempo": {"weather", "time"}, "hora": {"time"},
	"mostra": {"show", "list", "get"}, "ver": {"show", "get"}, "comprar": {"buy", "purchase"}, "compra": {"buy", "purchase"}, "vender": {"sell", "sale"},
	"vendas": {"sales"}, "venda": {"sale", "sales"}, "morada": {"address"}, "fotografia": {"photo", "image"}, "foto": {"photo", "image"},
	// Spanish
	"buscar": {"search", "find"}, "busca": {"search", "find"}, "busque": {"search"}, "consultar": {"search", "get"},
	"mostrar": {"show", "get", "list"}, "muestra": {"show", "get", "list"}, "muestrame": {"show", "get"}, "dame": {"get"},
	"convertir": {"convert"}, "convierte": {"convert"}, "cambia": {"convert", "update"}, "cambiar": {"update", "convert"},
	"analizar": {"analysis"}, "analiza": {"analysis"}, "precio": {"price"}, "precios": {"price", "prices"},
	"clima": {"weather"}, "borrar": {"remove"}, "borra": {"remove"}, "eliminar": {"remove", "delete"},
	"elimina": {"remove", "delete"}, "anadir": {"add", "save"}, "anade": {"add", "save"}, "agregar": {"add", "save"},
	"agrega": {"add", "save"}, "crear": {"create", "add"}, "crea": {"create", "add"}, "actualizar": {"update"},
	"actualiza": {"update"}, "listar": {"list"}, "lista": {"list"}, "coste": {"costs"}, "costo": {"costs"},
	"costos": {"costs"}, "presupuesto": {"budget"}, "tiempo": {"weather", "time"},
	// French
	"chercher": {"search", "find"}, "cherche": {"search", "find"}, "rechercher": {"search"}, "recherche": {"search"},
	"montrer": {"show", "get"}, "montre": {"show", "get"}, "afficher": {"show", "list"}, "affiche": {"show", "list"},
	"donne": {"get"}, "convertis": {"convert"}, "convertissez": {"convert"},
	"analyser": {"analysis"}, "prix": {"price"}, "meteo": {"weather"}, "heure": {"time"},
	"supprimer": {"remove", "delete"}, "supprime": {"remove", "delete"}, "enregistrer": {"save"}, "sauvegarder": {"save"},
	"ajouter": {"add", "save"}, "ajoute": {"add", "save"}, "comparer": {"compare"}, "creer": {"create", "add"},
	"modifier": {"update"}, "changer": {"update"}, "liste": {"list"}, "couts": {"costs"}, "cout": {"costs"},
	// German
	"suchen": {"search", "find"}, "suche": {"search", "find"}, "finde": {"find", "search"}, "finden": {"find", "search"},
	"zeige": {"show", "get", "list"}, "zeig": {"show", "get"}, "zeigen": {"show", "get"}, "anzeigen": {"show", "list"},
	"umrechnen": {"convert"}, "rechne": {"convert"}, "konvertieren": {"convert"}, "umwandeln": {"convert"},
	"analysieren": {"analysis"}, "analysiere": {"analysis"}, "preis": {"price"}, "preise": {"price", "prices"},
	"wetter": {"weather"}, "uhrzeit": {"time"}, "zeit": {"time"}, "loschen": {"remove", "delete"}, "losche": {"remove", "delete"},
	"speichern": {"save"}, "speichere": {"save"}, "hinzufugen": {"add", "save"}, "vergleichen": {"compare"},
	"vergleiche": {"compare"}, "erstellen": {"create", "add"}, "erstelle": {"create", "add"}, "andern": {"update"},
	"aktualisieren": {"update"}, "kosten": {"costs"},
}

// terms returns the content words of s with their synonyms (the model's and its packs'), each
// once.
func (v *vocab) terms(s string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range words(s) {
		if stop[w] || (len(w) < 3 && !hasDigit(w)) {
			continue
		}
		add(w)
		for _, syn := range v.synonyms[w] {
			add(syn)
		}
	}
	return out
}

func hasDigit(s string) bool { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

// similar scores how well two folded words match: 1 when equal (or equal but for a plural s),
// 0.6 when they share a prefix of five or more letters, 0 otherwise.
func similar(a, b string) float64 {
	if a == b || a+"s" == b || b+"s" == a {
		return 1
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n >= 5 {
		return 0.6
	}
	return 0
}

var (
	reURL     = regexp.MustCompile(`https?://[^\s<>"'\)\]]+`)
	reUUID    = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reEmail   = regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.-]+`)
	reQuoted  = regexp.MustCompile(`"([^"\n]{1,200})"|“([^”\n]{1,200})”|«([^»\n]{1,200})»|(?:^|[\s(\[:,])'([^'\n]{1,200})'`)
	reISODate = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
)

// quoted returns the strings inside quotation marks, in order.
func quoted(s string) []string {
	var out []string
	for _, m := range reQuoted.FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			if g = strings.TrimSpace(g); g != "" {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// capitalPhrases returns runs of capitalised words that do not open a sentence, like the
// "Blue Harbor" of "What is the status of Blue Harbor?".
func capitalPhrases(s string) []string {
	var out []string
	fields := strings.Fields(s)
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	for i, f := range fields {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		first := i == 0 || strings.ContainsAny(fields[i-1][len(fields[i-1])-1:], ".?!:")
		r := []rune(w)
		isCap := len(r) > 0 && unicode.IsUpper(r[0]) && !first && !stop[fold.String(w)] && !stop[fold.String(contracted(w))]
		isAllCaps := len(r) > 1 && strings.ToUpper(w) == w && !hasDigit(w)
		if isCap && !(isAllCaps && len(cur) == 0) {
			cur = append(cur, w)
			if strings.ContainsAny(f[len(f)-1:], ".?!,;:") {
				flush()
			}
			continue
		}
		flush()
	}
	flush()
	return out
}

// contracted is the word a contraction starts with: "I" of "I'm" and "I’ve", the whole word
// when it is no contraction ("O'Brien"). A stopword contracted is a stopword, never a name.
func contracted(w string) string {
	i := strings.IndexAny(w, "'’")
	if i <= 0 {
		return w
	}
	_, size := utf8.DecodeRuneInString(w[i:])
	switch strings.ToLower(w[i+size:]) {
	case "m", "ve", "d", "ll", "re", "s":
		return w[:i]
	}
	return w
}

// containsPhrase reports whether the folded words of phrase appear consecutively in text words.
func containsPhrase(text []string, phrase string) int {
	p := words(phrase)
	if len(p) == 0 {
		return -1
	}
	for i := 0; i+len(p) <= len(text); i++ {
		ok := true
		for j := range p {
			if text[i+j] != p[j] {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n])) + "…"
	}
	return s
}

func firstSentence(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	for i, r := range s {
		if (r == '.' || r == '?' || r == '!') && i > 20 {
			return s[:i+1]
		}
	}
	return s
}
