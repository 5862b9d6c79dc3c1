package rehab

import (
	"fmt"
	"testing"
)

// ExtractSection reads a section's data with the pack's words (pack/words.json).
func TestExtractSection(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ section, text, want string }{
		{"budget", "entre 150 mil e 200 mil euros", "map[max:200000 min:150000]"},
		{"budget", "até 40 mil para a obra", "map[renovacao_max:40000]"},
		{"budget", "o máximo é 250.000€", "map[max:250000]"},
		{"fiscal", "Tenho 31 anos e é a minha primeira habitação", "map[habitacao_propria_permanente:true idade:31 primeira_habitacao:true]"},
		{"fiscal", "é para viver, habitação permanente", "map[habitacao_propria_permanente:true]"},
		{"fiscal", "é um investimento para arrendar", "map[habitacao_propria_permanente:false]"},
		{"fiscal", "declaro no IRS, 45anos", "map[idade:45 regime:IRS]"},
		{"fiscal", "nada", "map[]"},
		{"renovation", "sei fazer pintura e canalização, acabamentos premium, prioridade cozinha e casa de banho", "map[diy_skills:[pintura canalizacao] prioridades:[kitchen bathroom] qualidade:premium]"},
		{"renovation", "qualidade básica, não vou mexer na sala nem no quarto", "map[excluir:[living_room bedroom] qualidade:basico]"},
		{"renovation", "gama média, o WC primeiro", "map[prioridades:[bathroom] qualidade:medio]"},
		{"renovation", "barato", "map[qualidade:basico]"},
		// A room named two ways is one room.
		{"renovation", "a casa de banho (o wc de cima)", "map[prioridades:[bathroom]]"},
		{"preferences", "um T2 em Alvalade ou Campo de Ourique", "map[tipologia:T2 zonas:[Alvalade Campo de Ourique]]"},
		{"goals", "  revender em dois anos ", "map[objetivo:revender em dois anos]"},
	} {
		if got := fmt.Sprint(ExtractSection(c.section, c.text)); got != c.want {
			t.Errorf("ExtractSection(%s, %q) = %s, want %s", c.section, c.text, got, c.want)
		}
	}
}
