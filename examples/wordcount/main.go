// Command wordcount is a jobmesh example job: it reads one block of text on
// stdin and writes the block's word frequencies on stdout in the canonical
// form of package counts.
package main

//go:generate env GOOS=wasip1 GOARCH=wasm go build -trimpath "-ldflags=-s -w" -o wordcount.wasm .

import (
	"fmt"
	"io"
	"os"

	"github.com/jobmesh/jobmesh/examples/wordcount/counts"
)

func main() {
	text, err := io.ReadAll(os.Stdin)
	if err == nil {
		_, err = os.Stdout.Write(counts.Encode(counts.Count(text)))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wordcount:", err)
		os.Exit(1)
	}
}
