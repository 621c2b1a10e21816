package main

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"testing"

	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/wasm"
)

// TestTilesThroughExecutor runs the example as WebAssembly on the real
// executor and checks each tile pixel for pixel against the native renderer.
func TestTilesThroughExecutor(t *testing.T) {
	ctx := context.Background()
	code, err := examples.Build(ctx, "mandelbrot")
	if err != nil {
		t.Fatal(err)
	}
	e, err := wasm.New(wasm.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)

	p := tiles.Params{Width: 100, Height: 70, TileWidth: 40, TileHeight: 40, MaxIter: 200, View: tiles.DefaultView}
	data, err := p.Job()
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := p.Tiles()
	// First, last (short in both directions) and one in between.
	for _, i := range []int{0, 2, len(ts) - 1} {
		block := data[i*tiles.DescriptorSize : (i+1)*tiles.DescriptorSize]
		out, err := e.Run(ctx, code, block)
		if err != nil {
			t.Fatalf("tile %d: %v", i, err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("tile %d: output is not a PNG: %v", i, err)
		}
		want := tiles.Render(ts[i])
		if img.Bounds() != want.Bounds() {
			t.Fatalf("tile %d: bounds %v, want %v", i, img.Bounds(), want.Bounds())
		}
		if !samePixels(img, want) {
			t.Fatalf("tile %d: pixels differ from the native renderer", i)
		}
		again, err := e.Run(ctx, code, block)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("tile %d: second run differs (%v)", i, err)
		}
	}
	if got := ts[len(ts)-1]; got.Width != 20 || got.Height != 30 {
		t.Fatalf("last tile %dx%d, want 20x30", got.Width, got.Height)
	}

	// A bad descriptor is a clean, explained failure.
	bad := bytes.Clone(data[:tiles.DescriptorSize])
	bad[0] = 'X'
	_, err = e.Run(ctx, code, bad)
	var exit *wasm.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !bytes.Contains([]byte(exit.Stderr), []byte("magic")) {
		t.Fatalf("bad descriptor: %v", err)
	}
}

func TestRunNative(t *testing.T) {
	tile := tiles.Tile{ImageWidth: 8, ImageHeight: 8, Width: 8, Height: 4, MaxIter: 50, View: tiles.DefaultView}
	var out bytes.Buffer
	if err := run(bytes.NewReader(tile.Encode()), &out); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&out)
	if err != nil || img.Bounds().Dx() != 8 || img.Bounds().Dy() != 4 {
		t.Fatalf("native run: %v, %v", img.Bounds(), err)
	}
	if err := run(bytes.NewReader(append(tile.Encode(), 0)), &out); !errors.Is(err, tiles.ErrDescriptor) {
		t.Fatalf("65-byte block: %v, want ErrDescriptor", err)
	}
}

func samePixels(a, b image.Image) bool {
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}
