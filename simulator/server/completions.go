package server

// OpenAI's Completions, /v1/completions: one prompt text.
func init() {
	register("completions", func(_ *Server, b []byte) (*decoded, error) { return decodeRequest(b, false) }, openAIAnswer{})
}
