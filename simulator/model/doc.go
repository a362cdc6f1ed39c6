// Package model is the simulator's room of models: the models file's
// schema, parsed and checked (ModelsFile, ModelSpec, PresetModels), and
// what a model does to a request beside scheduling it — reasoning
// (Think), tools (CallTool), vision (images' tokens, the encoder cache),
// pooling (PoolPlan), LoRA adapters, injected faults, the engine's rules
// (vLLM's or SGLang's). It speaks no HTTP: the server and the predictor
// both read it, and the predictor links no HTTP server.
package model
