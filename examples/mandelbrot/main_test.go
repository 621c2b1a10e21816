package main

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"testing"

	"github.com/jobmesh/jobmesh/assemble"
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
	outputs := make([][]byte, len(ts))
	for i := range ts {
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
		outputs[i] = out
	}
	again, err := e.Run(ctx, code, data[:tiles.DescriptorSize])
	if err != nil || !bytes.Equal(again, outputs[0]) {
		t.Fatalf("tile 0: second run differs (%v)", err)
	}

	// The whole job: assembled tiles equal the picture rendered at once.
	picture, err := assemble.NewRegistry().Assemble(assemble.KindPNGGrid, outputs, assemble.Options{Columns: p.Columns()})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(picture))
	if err != nil {
		t.Fatal(err)
	}
	whole := tiles.Render(tiles.Tile{ImageWidth: p.Width, ImageHeight: p.Height, Width: p.Width, Height: p.Height, MaxIter: p.MaxIter, View: p.View})
	if img.Bounds() != whole.Bounds() || !samePixels(img, whole) {
		t.Fatalf("assembled picture %v differs from the whole render", img.Bounds())
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
