package serverview

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kneebench/knee/results"
)

// loraInfo is vLLM's vllm:lora_requests_info: one series whose labels
// name the adapter slots and the adapters of the running and waiting
// requests at the time it was set.
const loraInfo = "vllm:lora_requests_info"

// sampleLoRA adds a scrape's LoRA state to what the window has seen: the
// slots, each adapter seen running or waiting, and how many samples found
// an adapter waiting (a request held back by the slots).
func sampleLoRA(s scrape, into **results.ServerLoRA) {
	f := s[loraInfo]
	if f == nil || len(f.Metric) == 0 {
		return
	}
	l := *into
	if l == nil {
		l = &results.ServerLoRA{}
		*into = l
	}
	l.Samples++
	waiting := false
	for _, m := range f.Metric {
		for _, lp := range m.Label {
			switch lp.GetName() {
			case "max_lora":
				if n, err := strconv.Atoi(lp.GetValue()); err == nil {
					l.MaxLoRAs = n
				}
			case "running_lora_adapters":
				l.Running = addNames(l.Running, lp.GetValue())
			case "waiting_lora_adapters":
				if lp.GetValue() != "" {
					waiting = true
				}
				l.Waiting = addNames(l.Waiting, lp.GetValue())
				countNames(&l.WaitingSamples, lp.GetValue())
			}
		}
	}
	if waiting {
		l.SamplesWaiting++
	}
}

// addNames adds the comma-separated names to a sorted set.
func addNames(set []string, names string) []string {
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(set, n) {
			set = append(set, n)
		}
	}
	slices.Sort(set)
	return set
}

// countNames counts each of the comma-separated names once.
func countNames(counts *map[string]int, names string) {
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			if *counts == nil {
				*counts = map[string]int{}
			}
			(*counts)[n]++
		}
	}
}
