package server

import (
	"fmt"
	_ "image/jpeg" // the formats a data URL's image is read in
	_ "image/png"
	"io"
	"net/http"
	"time"
)

// maxFetchedImage bounds an image fetched by URL.
const maxFetchedImage = 64 << 20

// imageClient fetches within vLLM's VLLM_IMAGE_FETCH_TIMEOUT default.
var imageClient = &http.Client{Timeout: 5 * time.Second}

// FetchImage fetches an image URL as vLLM's media connector does: a GET
// within 5 s, a 200 answer, at most 64 MiB.
func FetchImage(url string) ([]byte, error) {
	resp, err := imageClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchedImage+1))
	if err == nil && len(b) > maxFetchedImage {
		err = fmt.Errorf("larger than %d MiB", maxFetchedImage>>20)
	}
	return b, err
}
