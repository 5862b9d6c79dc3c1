package offline

// The offline model writes its fixed phrases in the language of the user's last message: English,
// Portuguese, Spanish, French or German, detected by counting each language's common words.

type lang int

const (
	langEN lang = iota
	langPT
	langES
	langFR
	langDE
)

// langWords are frequent words that mostly belong to one language (accents folded away).
var langWords = [...]map[string]bool{
	langEN: setOf(`the and is are what which of to please for with then show me my it this that how find look up get`),
	langPT: setOf(`o os uma do da dos das e em no na nos nas ao aos para com qual quais por favor depois mostra mostrar meu minha isso isto voce nao sao esta este procura quero queria quanto pago tambem obrigado ola orcamento analisa adiciona compara`),
	langES: setOf(`el los las un una del y para con cual cuales por favor luego despues muestra mostrar mi esto eso usted no son esta busca buscar dame`),
	langFR: setOf(`le la les un une des du et pour avec quel quelle quels est puis ensuite montre montrer moi mon ma je vous cherche cherchez donne`),
	langDE: setOf(`der die das ein eine und ist mit fur was welche welcher dann danach zeige zeig mir mein meine ich sie bitte suche finde gib`),
}

// detect returns the language of text, English when no other language's words outnumber its.
// Packs add words to each language's.
func (v *vocab) detect(text string) lang {
	var score [len(langWords)]int
	for _, w := range words(text) {
		for l, set := range v.langWords {
			if set[w] {
				score[l]++
			}
		}
	}
	best := langEN
	for l := range score {
		if score[l] > score[best] {
			best = lang(l)
		}
	}
	return best
}

// phrases are the offline model's fixed sentences in one language. Each %s or %q takes what the
// English one takes.
type phrases struct {
	calling       string    // "Calling %s."
	found         string    // "Here is what I found for %q."
	reportedError string    // " reported an error"
	need          string    // "To use `%s` I need %s. Please include it in your message."
	and           string    // joins missing arguments
	noModel       string    // the fallback's first sentence
	youAsked      string    // "You asked: %q."
	noTool        string    // "I did not find a tool ... I can:"
	nameIt        string    // how to ask again
	setModel      string    // how to configure a provider
	imageSees     string    // "The picture is labelled: %s."
	imageBlind    string    // the picture carries nothing readable
	followUps     [3]string // follow-up questions about a topic (%s)
}

var phraseBook = [...]phrases{
	langEN: {
		calling: "Calling %s.", found: "Here is what I found for %q.", reportedError: " reported an error",
		need: "To use `%s` I need %s. Please include it in your message.", and: " and ",
		noModel: "No language model is configured, so I answer by fixed rules.", youAsked: "You asked: %q.",
		noTool:    "I did not find a tool that matches your words. I can:",
		nameIt:    "Name what you want in those words (quote names and give dates, numbers or links).",
		setModel:  "Set TRELLIS_MODEL to a provider (for example openai:gpt-4o) for free-form answers.",
		imageSees: "The picture is labelled: %s.", imageBlind: "I cannot see this picture: the offline model reads only text embedded in an image (PNG text chunks, EXIF, XMP) or a sidecar file, and this one has none.",
		followUps: [3]string{"Can you tell me more about %s?", "How does %s compare with the alternatives?", "What should I do next about %s?"},
	},
	langPT: {
		calling: "A chamar %s.", found: "Eis o que encontrei para %q.", reportedError: " devolveu um erro",
		need: "Para usar `%s` preciso de %s. Inclua-o na sua mensagem, por favor.", and: " e ",
		noModel: "Não há um modelo de linguagem configurado, por isso respondo por regras fixas.", youAsked: "Perguntou: %q.",
		noTool:    "Não encontrei uma ferramenta que corresponda às suas palavras. Posso:",
		nameIt:    "Diga o que quer com essas palavras (nomes entre aspas, datas, números ou links).",
		setModel:  "Defina TRELLIS_MODEL com um fornecedor (por exemplo openai:gpt-4o) para respostas livres.",
		imageSees: "A imagem está identificada como: %s.", imageBlind: "Não consigo ver esta imagem: o modelo offline só lê texto embutido na imagem (blocos de texto PNG, EXIF, XMP) ou um ficheiro anexo, e esta não tem nenhum.",
		followUps: [3]string{"Pode dizer-me mais sobre %s?", "Como se compara %s com as alternativas?", "Qual deve ser o próximo passo quanto a %s?"},
	},
	langES: {
		calling: "Llamando a %s.", found: "Esto es lo que encontré para %q.", reportedError: " devolvió un error",
		need: "Para usar `%s` necesito %s. Inclúyalo en su mensaje, por favor.", and: " y ",
		noModel: "No hay un modelo de lenguaje configurado, así que respondo con reglas fijas.", youAsked: "Preguntó: %q.",
		noTool:    "No encontré una herramienta que coincida con sus palabras. Puedo:",
		nameIt:    "Diga lo que quiere con esas palabras (nombres entre comillas, fechas, números o enlaces).",
		setModel:  "Configure TRELLIS_MODEL con un proveedor (por ejemplo openai:gpt-4o) para respuestas libres.",
		imageSees: "La imagen está etiquetada como: %s.", imageBlind: "No puedo ver esta imagen: el modelo sin conexión solo lee texto incrustado (PNG, EXIF, XMP) o un archivo adjunto, y esta no tiene ninguno.",
		followUps: [3]string{"¿Puede contarme más sobre %s?", "¿Cómo se compara %s con las alternativas?", "¿Qué debería hacer ahora con %s?"},
	},
	langFR: {
		calling: "J'appelle %s.", found: "Voici ce que j'ai trouvé pour %q.", reportedError: " a signalé une erreur",
		need: "Pour utiliser `%s` il me faut %s. Merci de l'indiquer dans votre message.", and: " et ",
		noModel: "Aucun modèle de langage n'est configuré, je réponds donc selon des règles fixes.", youAsked: "Vous avez demandé : %q.",
		noTool:    "Je n'ai pas trouvé d'outil qui corresponde à vos mots. Je peux :",
		nameIt:    "Dites ce que vous voulez avec ces mots (noms entre guillemets, dates, nombres ou liens).",
		setModel:  "Réglez TRELLIS_MODEL sur un fournisseur (par exemple openai:gpt-4o) pour des réponses libres.",
		imageSees: "L'image est étiquetée : %s.", imageBlind: "Je ne peux pas voir cette image : le modèle hors ligne ne lit que le texte intégré (PNG, EXIF, XMP) ou un fichier annexe, et celle-ci n'en a pas.",
		followUps: [3]string{"Pouvez-vous m'en dire plus sur %s ?", "Comment %s se compare-t-il aux alternatives ?", "Que dois-je faire ensuite pour %s ?"},
	},
	langDE: {
		calling: "Ich rufe %s auf.", found: "Das habe ich zu %q gefunden.", reportedError: " meldete einen Fehler",
		need: "Für `%s` brauche ich %s. Bitte nennen Sie es in Ihrer Nachricht.", and: " und ",
		noModel: "Es ist kein Sprachmodell konfiguriert, daher antworte ich nach festen Regeln.", youAsked: "Sie fragten: %q.",
		noTool:    "Ich habe kein Werkzeug gefunden, das zu Ihren Worten passt. Ich kann:",
		nameIt:    "Sagen Sie mit diesen Worten, was Sie möchten (Namen in Anführungszeichen, Daten, Zahlen oder Links).",
		setModel:  "Setzen Sie TRELLIS_MODEL auf einen Anbieter (zum Beispiel openai:gpt-4o) für freie Antworten.",
		imageSees: "Das Bild ist beschriftet: %s.", imageBlind: "Ich kann dieses Bild nicht sehen: das Offline-Modell liest nur eingebetteten Text (PNG, EXIF, XMP) oder eine Begleitdatei, und dieses hat keinen.",
		followUps: [3]string{"Können Sie mir mehr über %s sagen?", "Wie schneidet %s im Vergleich zu den Alternativen ab?", "Was sollte ich als Nächstes zu %s tun?"},
	},
}

func (l lang) p() phrases { return phraseBook[l] }
