package model

import (
	"reflect"
	"strings"
)

// besidePreset are the fields of a model that may be given beside a
// preset: its name, its behaviour (reasoning, tools, pooling, vision,
// LoRA) and its engine's policies. Everything else is the preset's.
var besidePreset = []string{"Name", "Preset", "Reasoning", "Tools", "Pooling", "Vision", "LoRA", "SchedulingPolicy",
	"LongPrefillTokenThreshold", "SchedulesAs", "StreamInterval", "StepTimeCV", "Disaggregated"}

// copyBeside sets dst's fields allowed beside a preset to src's.
func copyBeside(dst *ModelSpec, src ModelSpec) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for _, f := range besidePreset {
		d.FieldByName(f).Set(s.FieldByName(f))
	}
}

// besideNames lists the YAML names of the fields allowed beside a preset,
// for the error that refuses any other.
func besideNames() string {
	t := reflect.TypeFor[ModelSpec]()
	var names []string
	for _, f := range besidePreset[2:] {
		sf, _ := t.FieldByName(f)
		names = append(names, strings.Split(sf.Tag.Get("yaml"), ",")[0])
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
