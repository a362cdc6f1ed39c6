package model

import (
	"errors"
	"fmt"
)

// checkVocab refuses a vocabulary the weights cannot hold: its table (two,
// untied) must be under half the parameters.
func checkVocab(a *ArchitectureSpec, billions float64) error {
	if a == nil || a.VocabSize == 0 {
		return nil
	}
	if a.VocabSize < 0 || a.VocabSize > 1<<24 || a.HiddenSize == 0 {
		return errors.New("architecture: vocab_size from 1 to 16,777,216, with hidden_size")
	}
	tables := float64(a.VocabSize) * float64(a.HiddenSize) * 2
	if a.TiedEmbeddings {
		tables /= 2
	}
	if tables >= billions*1e9/2 {
		return fmt.Errorf("architecture: vocab_size %d × hidden_size %d is %.3g B parameters of embedding%s, not under half the weights' %.3g B",
			a.VocabSize, a.HiddenSize, tables/1e9, map[bool]string{false: " and LM head"}[a.TiedEmbeddings], billions)
	}
	return nil
}
