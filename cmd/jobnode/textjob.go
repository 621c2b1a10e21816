package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jobmesh/jobmesh/examples/wordcount/counts"
)

// Block cutting of job submit --split.
const (
	splitBytes = "bytes" // blocks of exactly --block-size bytes (the default)
	splitWords = "words" // text cut only between words, each block padded with spaces
)

// Output merging of job get --merge.
const mergeWordCount = "wordcount"

// maxSplitBytes bounds the text job submit --split words reads into memory.
const maxSplitBytes = 1 << 30

// splitData reads the local text file data and lays it out in blocks of
// blockSize bytes that never cut a word (counts.Pack): a word-based job
// then sees whole words in every block.
func splitData(data string, blockSize uint64) (io.Reader, error) {
	if strings.Contains(data, "://") {
		return nil, flagError("split", "%s needs a local --data file to cut, not a URI", splitWords)
	}
	if blockSize > maxSplitBytes {
		return nil, flagError("block-size", "%d is over %d for --split %s", blockSize, maxSplitBytes, splitWords)
	}
	f, err := os.Open(data)
	if err != nil {
		return nil, usageError(fmt.Errorf("--data: %w", err))
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, maxSplitBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--data %s: %w", data, err)
	}
	if len(text) > maxSplitBytes {
		return nil, flagError("split", "%s reads at most %d bytes; %s is larger", splitWords, maxSplitBytes, data)
	}
	packed, err := counts.Pack(text, int(blockSize))
	if err != nil {
		return nil, flagError("split", "%s: %v", splitWords, err)
	}
	return bytes.NewReader(packed), nil
}

// mergeOutput turns a fetched output into its merged form: for
// "wordcount", the per-block word counts joined by the concat assembly
// summed into one table.
func mergeOutput(kind string, output io.Reader) (io.Reader, error) {
	if kind != mergeWordCount {
		return nil, flagError("merge", "%q: want %s", kind, mergeWordCount)
	}
	b, err := io.ReadAll(io.LimitReader(output, counts.MaxEncodedBytes+1))
	if err != nil {
		return nil, err
	}
	total, err := counts.Sum(b)
	if err != nil {
		return nil, fmt.Errorf("--merge %s: the output is not word counts: %w", kind, err)
	}
	return bytes.NewReader(total), nil
}
