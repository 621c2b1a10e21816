package examples

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func TestBuild(t *testing.T) {
	ctx := context.Background()
	a, err := Build(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(a, []byte("\x00asm\x01\x00\x00\x00")) {
		t.Fatalf("not a WebAssembly module: % x", a[:min(8, len(a))])
	}
	a[0] = 'X' // callers get their own copy
	b, err := Build(ctx, "wordcount")
	if err != nil || b[0] != 0 {
		t.Fatalf("second Build: %v, first byte %#x", err, b[0])
	}
	// -trimpath makes the module independent of where it was built, so
	// every processor building from the same source gets the same bytes.
	dir, err := Dir("wordcount")
	if err != nil {
		t.Fatal(err)
	}
	c, err := goBuild(ctx, dir)
	if err != nil || !bytes.Equal(b, c) {
		t.Fatalf("rebuild differs (%v)", err)
	}
}

func TestBuildUnknown(t *testing.T) {
	if _, err := Build(context.Background(), "nope"); !errors.Is(err, ErrBuild) {
		t.Fatalf("err = %v, want ErrBuild", err)
	}
}
