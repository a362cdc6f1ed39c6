package model

import (
	"reflect"
	"strings"
)

// behaviourFields are what a model may give beside a preset: its
// behaviour (reasoning, tools, pooling, vision, LoRA) and its engine's
// policies. Everything else but its name is the preset's.
var behaviourFields = []string{"Reasoning", "Tools", "Pooling", "Vision", "LoRA", "SchedulingPolicy",
	"LongPrefillTokenThreshold", "SchedulesAs", "StreamInterval", "NumSchedulerSteps", "MultiStepStreamOutputs", "ScheduleOverheadMs", "MaxModelLen", "StepTimeCV",
	"Disaggregated"}

// besidePreset are the fields a model given as a preset keeps as its own.
var besidePreset = append([]string{"Name", "Preset"}, behaviourFields...)

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
	for _, f := range behaviourFields {
		sf, _ := t.FieldByName(f)
		names = append(names, strings.Split(sf.Tag.Get("yaml"), ",")[0])
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
