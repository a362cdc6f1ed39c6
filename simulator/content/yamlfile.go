package content

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"go.yaml.in/yaml/v3"
)

// DecodeStrict decodes YAML, rejecting unknown keys and any number that is
// NaN or infinite (.nan passes every comparison that bounds a field, and a
// result holding one cannot be written); an empty file is an error of its
// own.
func DecodeStrict(data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	if err := finite(&doc, ""); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("file is empty")
		}
		return err
	}
	return nil
}

// finite finds the first number in n that is NaN or infinite; key is
// the mapping key n is the value of, for the message.
func finite(n *yaml.Node, key string) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
		var f float64
		if err := n.Decode(&f); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			if key != "" {
				return fmt.Errorf("line %d: %s %s is not a finite number", n.Line, key, n.Value)
			}
			return fmt.Errorf("line %d: %s is not a finite number", n.Line, n.Value)
		}
	}
	for i, c := range n.Content {
		k := key
		if n.Kind == yaml.MappingNode {
			if i%2 == 0 {
				continue // a key: the value after it is checked under its name
			}
			k = n.Content[i-1].Value
		}
		if err := finite(c, k); err != nil {
			return err
		}
	}
	return nil
}
