// Command count prints, for each JSON string on standard input (one per
// line), how many tokens a tokenizer.json counts in it, one per line: the
// llama-lengths script compares them with llama-server's /tokenize.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/kneebench/knee/workload/hftokenizer"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: count TOKENIZER.json < texts.jsonl")
		os.Exit(2)
	}
	tok, err := hftokenizer.Load(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var text string
		if err := json.Unmarshal(sc.Bytes(), &text); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(tok.Count(text))
	}
}
