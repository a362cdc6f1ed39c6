package model

import (
	"errors"
	"fmt"

	"github.com/kneebench/knee/simulator/sched"
)

// checkVocab bounds a vocabulary's figures: a size some tokenizer could
// have, with the hidden size its table needs.
func checkVocab(a *ArchitectureSpec) error {
	if a == nil || a.VocabSize == 0 {
		return nil
	}
	if a.VocabSize < 0 || a.VocabSize > 1<<24 || a.HiddenSize == 0 {
		return errors.New("architecture: vocab_size from 1 to 16,777,216, with hidden_size")
	}
	return nil
}

// checkVocabTerm refuses a vocabulary the scheduler core will not charge
// (its tables most of what a token multiplies through), where the term
// would be dropped without a word.
func checkVocabTerm(m *ModelSpec, cfg sched.Config) error {
	a := m.Architecture
	if a == nil || a.VocabSize == 0 || cfg.Costs.Vocabulary() {
		return nil
	}
	tables := map[bool]string{false: "its embedding table and LM head", true: "its tied embedding table"}[a.TiedEmbeddings]
	return fmt.Errorf("architecture: vocab_size %d × hidden_size %d: %s would be half or more of the parameters "+
		"a token multiplies through (%g B weights): check vocab_size, hidden_size and parameters_billions",
		a.VocabSize, a.HiddenSize, tables, m.Weights.ParametersBillions)
}
