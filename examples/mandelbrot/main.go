// Command mandelbrot is a jobmesh example job: it reads one 64-byte tile
// descriptor (see package tiles) on stdin and writes the rendered tile as a
// PNG on stdout.
package main

//go:generate env GOOS=wasip1 GOARCH=wasm go build -trimpath "-ldflags=-s -w" -o mandelbrot.wasm .

import (
	"bufio"
	"fmt"
	"image/png"
	"io"
	"os"

	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mandelbrot:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	// One more byte than a descriptor, so an oversized block is noticed.
	b, err := io.ReadAll(io.LimitReader(in, tiles.DescriptorSize+1))
	if err != nil {
		return err
	}
	t, err := tiles.Decode(b)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	if err := png.Encode(w, tiles.Render(t)); err != nil {
		return err
	}
	return w.Flush()
}
