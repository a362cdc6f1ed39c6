package server

// OpenAI's Chat Completions, /v1/chat/completions: messages laid out by
// the model's chat template.
func init() {
	register("chat", func(_ *Server, b []byte) (*decoded, error) { return decodeRequest(b, true) }, openAIAnswer{})
}
