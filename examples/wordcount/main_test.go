package main

import (
	"context"
	"testing"

	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/examples/wordcount/counts"
	"github.com/jobmesh/jobmesh/wasm"
)

const text = `The quick brown fox jumps over the lazy dog. THE DOG sleeps;
the fox — quick, quick — runs. Über straße: Straße, über! 42 foxes, 42 dogs.`

// TestBlocksThroughExecutor packs a known text into blocks, counts each block
// in WebAssembly on the real executor, and merges the results.
func TestBlocksThroughExecutor(t *testing.T) {
	ctx := context.Background()
	code, err := examples.Build(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	e, err := wasm.New(wasm.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)

	const blockSize = 32
	data, err := counts.Pack([]byte(text), blockSize)
	if err != nil {
		t.Fatal(err)
	}
	var outputs [][]byte
	for off := 0; off < len(data); off += blockSize {
		out, err := e.Run(ctx, code, data[off:off+blockSize])
		if err != nil {
			t.Fatalf("block at %d: %v", off, err)
		}
		outputs = append(outputs, out)
	}
	if len(outputs) < 5 {
		t.Fatalf("only %d blocks; the test wants several", len(outputs))
	}
	total, err := counts.Merge(outputs)
	if err != nil {
		t.Fatal(err)
	}
	want := "42 2\nbrown 1\ndog 2\ndogs 1\nfox 2\nfoxes 1\njumps 1\nlazy 1\nover 1\nquick 3\nruns 1\nsleeps 1\nstraße 2\nthe 4\nüber 2\n"
	if string(total) != want {
		t.Fatalf("total:\n%s\nwant:\n%s", total, want)
	}
}
