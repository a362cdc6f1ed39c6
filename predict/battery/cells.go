// Package battery is knee's public training battery: serving measurements
// taken from public sources (each cited in docs/fidelity.md), and what the
// scheduler core predicts for each of them in virtual time. It answers
// how far knee predict is from engines it has never seen, cell by cell,
// and how far it would be from a source it was not fitted to.
package battery

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Cell is one published load point: a model on GPUs under one engine,
// requests of fixed lengths sent closed-loop or all at once, and the
// figures measured there.
type Cell struct {
	Source, Name string
	// GPU and Model make a preset spec, GPUxN/MODEL[@DTYPE[,kv=DTYPE]].
	GPU, Model string
	// Engine is vllm, vllm-v0, sglang or trtllm; Version is the one
	// measured.
	Engine, Version string
	Input, Output   int
	// Concurrency is the closed loop's users; 0 sends every request at
	// once (a rate of inf, or an offline throughput run).
	Concurrency int
	Requests    int
	// Measured holds each metric's published figure, by Metrics' names.
	Measured map[string]float64
	// KernelShapes gives the cell's GPU its family's matrix products by
	// shape (presets.GEMMFitFor), where the presets give none.
	KernelShapes bool
	// NoVocabulary charges the model's embedding and LM head as products
	// of every token, as the cost model did before its vocabulary term
	// (for comparisons).
	NoVocabulary bool
}

// Metrics are the figures a cell may carry: latencies in ms (means,
// medians and 95th percentiles as the sources' tools compute them; e2e_max
// is a batch's latency as vLLM's benchmark_latency times it, from the
// batch's start to its last token, and e2e_mean its requests' mean, as
// vllm bench latency reports it) and the output tokens per second of the
// whole run.
var Metrics = []string{"ttft_mean", "ttft_p50", "ttft_p95", "tpot_mean", "tpot_p95", "itl_p50", "e2e_mean", "e2e_p95", "e2e_max", "out_tps"}

// Spec is the cell's preset spec.
func (c *Cell) Spec() string { return c.GPU + "/" + c.Model }

// header is the cells file's columns, one metric a row.
var header = []string{"source", "cell", "gpu", "model", "engine", "version", "input", "output", "load", "requests", "metric", "measured"}

// maxFileBytes bounds a cells file (the battery's is about 50 KB), so a
// device or an endless stream named by mistake is refused, not read on.
const maxFileBytes = 16 << 20

// ReadFile reads the cells file at path (Read).
func ReadFile(path string) ([]*Cell, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("%s: more than %d MiB: not a cells file", path, maxFileBytes>>20)
	}
	return Read(bytes.NewReader(b))
}

// Read reads a cells file: one row a metric, rows of one cell adjacent.
func Read(r io.Reader) ([]*Cell, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != strings.Join(header, ",") {
		return nil, errors.New("cells: want the header " + strings.Join(header, ","))
	}
	var cells []*Cell
	byName := map[string]*Cell{}
	for i, row := range rows[1:] {
		c, metric, v, err := parseRow(row)
		if err != nil {
			return nil, fmt.Errorf("cells: row %d: %w", i+2, err)
		}
		if have, ok := byName[c.Name]; ok {
			c = have
		} else {
			byName[c.Name] = c
			cells = append(cells, c)
		}
		c.Measured[metric] = v
	}
	return cells, nil
}

// parseRow reads one row into a cell and its metric.
func parseRow(row []string) (*Cell, string, float64, error) {
	c := &Cell{Source: row[0], Name: row[1], GPU: row[2], Model: row[3], Engine: row[4], Version: row[5], Measured: map[string]float64{}}
	var errs [4]error
	c.Input, errs[0] = strconv.Atoi(row[6])
	c.Output, errs[1] = strconv.Atoi(row[7])
	c.Requests, errs[2] = strconv.Atoi(row[9])
	if row[8] != "burst" {
		c.Concurrency, errs[3] = strconv.Atoi(strings.TrimPrefix(row[8], "c"))
	}
	if err := errors.Join(errs[:]...); err != nil {
		return nil, "", 0, err
	}
	v, err := strconv.ParseFloat(row[11], 64)
	switch {
	case err != nil || !(v > 0) || math.IsInf(v, 0):
		return nil, "", 0, fmt.Errorf("measured %q: want a positive number", row[11])
	case !isMetric(row[10]):
		return nil, "", 0, fmt.Errorf("metric %q: want one of %s", row[10], strings.Join(Metrics, ", "))
	case c.Input < 1 || c.Output < 1 || c.Requests < 1 || c.Concurrency < 0:
		return nil, "", 0, errors.New("lengths, requests and load must be positive")
	}
	return c, row[10], v, nil
}

func isMetric(m string) bool { return slices.Contains(Metrics, m) }
